import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One node's run within an execution; unique per (execution, node), which makes steps idempotent. */
@Entity({ name: 'execution_steps' })
@Index('uq_execution_steps_execution_node', ['executionId', 'nodeId'], { unique: true })
export class ExecutionStep {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'execution_id', type: 'uuid' })
  executionId: string;

  @Column({ name: 'node_id', type: 'varchar', length: 64 })
  nodeId: string;

  @Column({ type: 'varchar', length: 32 })
  type: string;

  @Column({ type: 'varchar', length: 16 })
  status: 'completed' | 'failed';

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz' })
  completedAt: Date;

  @Column({ name: 'duration_ms', type: 'int' })
  durationMs: number;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  input: Record<string, unknown>;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  output: Record<string, unknown>;

  /** How many times the node was attempted: more than 1 when it failed transiently and was tried again. */
  @Column({ type: 'int', default: 1 })
  attempt: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
