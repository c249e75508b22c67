import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const EXECUTION_STATUSES = ['running', 'success', 'failed'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** Where a running execution stands: the next node to run, and a form's progress while it waits. */
export interface ExecutionState {
  /** The node to run next; absent before the first run (which starts at the first node) and once finished. */
  cursor?: string;
  /** The latest customer message, which ai_response nodes answer. */
  lastMessage?: string;
  /** The last text sent to the customer, reported as output.response. */
  lastResponse?: string;
  form?: {
    nodeId: string;
    fieldIndex: number;
    answers: Record<string, unknown>;
    startedAt: string;
  };
}

@Entity({ name: 'workflow_executions' })
@Index('idx_workflow_executions_workflow_started', ['workflowId', 'startedAt', 'id'])
export class WorkflowExecution {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId: string;

  /** The workflow version this execution runs, whatever later edits do. */
  @Column({ name: 'workflow_version', type: 'int' })
  workflowVersion: number;

  @Column({ name: 'trigger_id', type: 'uuid', nullable: true })
  triggerId: string | null;

  @Column({ name: 'trigger_execution_id', type: 'uuid', nullable: true })
  triggerExecutionId: string | null;

  /** Internal id of the customer row; the API shows customerRef. */
  @Column({ name: 'customer_id', type: 'uuid', nullable: true })
  customerId: string | null;

  @Column({ name: 'customer_ref', type: 'varchar', length: 200, nullable: true })
  customerRef: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  channel: string | null;

  /** The channel account the execution replies through (started from its webhook, or a message naming it). */
  @Column({ name: 'channel_account_id', type: 'uuid', nullable: true })
  channelAccountId: string | null;

  @Column({ type: 'varchar', length: 16, default: 'running' })
  status: ExecutionStatus;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  input: Record<string, unknown>;

  @Column({ type: 'jsonb', nullable: true })
  output: { response: string | null; next_action: string } | null;

  @Column({ type: 'jsonb', nullable: true })
  error: { code: string; message: string; node_id?: string } | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  state: ExecutionState;

  /** True while a form waits for the customer's reply. */
  @Column({ type: 'boolean', default: false })
  waiting: boolean;

  @Column({ name: 'wait_expires_at', type: 'timestamptz', nullable: true })
  waitExpiresAt: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  @Column({ name: 'duration_ms', type: 'int', nullable: true })
  durationMs: number | null;

  /** The failed execution this one re-runs (POST .../retry); null for an execution a trigger started. */
  @Column({ name: 'retry_of', type: 'uuid', nullable: true })
  retryOf: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
