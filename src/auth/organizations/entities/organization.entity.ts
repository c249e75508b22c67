import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'organizations' })
export class Organization {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 200, unique: true })
  name: string;

  /** Execution data retention override in milliseconds (bigint as text); null: EXECUTION_RETENTION; '0': keep everything. */
  @Column({ name: 'execution_retention_ms', type: 'bigint', nullable: true })
  executionRetentionMs: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
