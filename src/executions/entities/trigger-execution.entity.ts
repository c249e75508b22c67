import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { ExecutionStatus } from './workflow-execution.entity.js';

/**
 * One firing of a trigger. It follows its workflow execution (running, then success or failed
 * in the same transaction as the workflow execution); a refused firing (inactive trigger or
 * workflow) is failed at once with an error and has no workflow execution.
 */
@Entity({ name: 'trigger_executions' })
@Index('idx_trigger_executions_trigger_triggered', ['triggerId', 'triggeredAt', 'id'])
export class TriggerExecution {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'trigger_id', type: 'uuid' })
  triggerId: string;

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId: string;

  @Column({ name: 'workflow_execution_id', type: 'uuid', nullable: true })
  workflowExecutionId: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: ExecutionStatus;

  /** `{message, customer_id, channel, data?, metadata:{user_agent, timestamp}}` */
  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  input: Record<string, unknown>;

  @Column({ type: 'jsonb', nullable: true })
  error: { code: string; message: string } | null;

  @Column({ name: 'triggered_at', type: 'timestamptz' })
  triggeredAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  @Column({ name: 'duration_ms', type: 'int', nullable: true })
  durationMs: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
