import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { CredentialType } from '../../auth/access.js';
import type { WorkflowConfiguration } from '../workflow-graph.validator.js';

/**
 * An immutable snapshot of a workflow: its configuration (executions pin the version they started
 * with) and its name, description and channel as the version was written, with the credential that
 * wrote it. The history of `GET /v1/workflows/{id}/versions`.
 */
@Entity({ name: 'workflow_versions' })
@Index('uq_workflow_versions_workflow_version', ['workflowId', 'version'], { unique: true })
export class WorkflowVersion {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId: string;

  @Column({ type: 'int' })
  version: number;

  @Column({ type: 'jsonb' })
  configuration: WorkflowConfiguration;

  /** NULL on versions written before the history recorded them (migration WorkflowVersionHistory). */
  @Column({ type: 'varchar', length: 200, nullable: true })
  name: string | null;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  channel: string | null;

  @Column({ name: 'created_by_type', type: 'varchar', length: 16, nullable: true })
  createdByType: CredentialType | null;

  @Column({ name: 'created_by_id', type: 'uuid', nullable: true })
  createdById: string | null;

  /** OAuth tokens: the user who authorized the client. */
  @Column({ name: 'created_by_user_id', type: 'uuid', nullable: true })
  createdByUserId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
