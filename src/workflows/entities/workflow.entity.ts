import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { WorkflowConfiguration } from '../workflow-graph.validator.js';

export const WORKFLOW_STATUSES = ['draft', 'active', 'inactive'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

@Entity({ name: 'workflows' })
@Index('uq_workflows_org_name', ['organizationId', 'name'], { unique: true })
@Index('idx_workflows_org_created', ['organizationId', 'createdAt', 'id'])
export class Workflow {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  channel: string | null;

  @Column({ type: 'varchar', length: 16, default: 'draft' })
  status: WorkflowStatus;

  /** The current configuration; every version of it is kept in workflow_versions. */
  @Column({ type: 'jsonb' })
  configuration: WorkflowConfiguration;

  @Column({ type: 'int', default: 1 })
  version: number;

  @Column({ name: 'execution_count', type: 'int', default: 0 })
  executionCount: number;

  /** Finished executions by outcome; success_rate is derived from them and null while both are 0. */
  @Column({ name: 'success_count', type: 'int', default: 0 })
  successCount: number;

  @Column({ name: 'failure_count', type: 'int', default: 0 })
  failureCount: number;

  @Column({ name: 'activated_at', type: 'timestamptz', nullable: true })
  activatedAt: Date | null;

  @Column({ name: 'deactivated_at', type: 'timestamptz', nullable: true })
  deactivatedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A workflow as list items show it: no configuration (and the organization is the caller's own). */
export type WorkflowSummary = Omit<Workflow, 'configuration' | 'organizationId'>;

/** A summary as the list query reads it: PostgreSQL has already written the timestamps as ISO-8601 text. */
export interface WorkflowSummaryRow extends Omit<WorkflowSummary, 'activatedAt' | 'deactivatedAt' | 'createdAt' | 'updatedAt'> {
  activatedAt: string | null;
  deactivatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
