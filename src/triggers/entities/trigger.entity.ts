import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** The trigger types (one definition each in ../trigger-types/); a workflow's managed trigger takes one of them too. */
export const TRIGGER_TYPES = ['message', 'schedule', 'webhook', 'api'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const TRIGGER_STATUSES = ['active', 'inactive', 'paused'] as const;
export type TriggerStatus = (typeof TRIGGER_STATUSES)[number];

@Entity({ name: 'triggers' })
@Index('uq_triggers_org_name', ['organizationId', 'name'], { unique: true, where: 'NOT managed' })
@Index('idx_triggers_org_created', ['organizationId', 'createdAt', 'id'])
export class Trigger {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  type: TriggerType;

  @Column({ type: 'varchar', length: 16, default: 'active' })
  status: TriggerStatus;

  @Column({ type: 'varchar', length: 32, nullable: true })
  channel: string | null;

  /** The type's configuration, without secrets (see secretEncrypted). */
  @Column({ type: 'jsonb' })
  configuration: Record<string, unknown>;

  /**
   * A workflow's own message trigger, kept in sync with its `configuration.trigger` by the database
   * (migration WorkflowMessageTriggers); the trigger routes refuse to change it.
   */
  @Column({ type: 'boolean', default: false })
  managed: boolean;

  /** A webhook trigger's verification secret, encrypted at rest (see common/crypto/secret-box.ts). */
  @Column({ name: 'secret_encrypted', type: 'text', nullable: true })
  secretEncrypted: string | null;

  @Column({ name: 'execution_count', type: 'int', default: 0 })
  executionCount: number;

  @Column({ name: 'last_triggered', type: 'timestamptz', nullable: true })
  lastTriggered: Date | null;

  @Column({ name: 'activated_at', type: 'timestamptz', nullable: true })
  activatedAt: Date | null;

  @Column({ name: 'deactivated_at', type: 'timestamptz', nullable: true })
  deactivatedAt: Date | null;

  @Column({ name: 'paused_at', type: 'timestamptz', nullable: true })
  pausedAt: Date | null;

  @Column({ name: 'resumed_at', type: 'timestamptz', nullable: true })
  resumedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
