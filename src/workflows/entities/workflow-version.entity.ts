import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { WorkflowConfiguration } from '../workflow-graph.validator.js';

/** An immutable snapshot of a workflow's configuration; executions pin the version they started with. */
@Entity({ name: 'workflow_versions' })
@Index('uq_workflow_versions_workflow_version', ['workflowId', 'version'], { unique: true })
export class WorkflowVersion {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId: string;

  @Column({ type: 'int' })
  version: number;

  @Column({ type: 'jsonb' })
  configuration: WorkflowConfiguration;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
