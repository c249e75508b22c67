import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'webhooks' })
@Index('uq_webhooks_org_url', ['organizationId', 'url'], { unique: true })
@Index('idx_webhooks_org_created', ['organizationId', 'createdAt', 'id'])
export class Webhook {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** Event types as given: exact types, `<group>.*` or `*`; matched by the relay. */
  @Column({ type: 'text', array: true })
  events: string[];

  /** The signing secret, encrypted at rest with the secret box (context: the webhook id). */
  @Column({ name: 'secret_encrypted', type: 'text' })
  secretEncrypted: string;

  /** After a rotation, the old secret keeps signing (a second signature) until it expires. */
  @Column({ name: 'previous_secret_encrypted', type: 'text', nullable: true })
  previousSecretEncrypted: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @Column({ name: 'max_retries', type: 'int', default: 3 })
  maxRetries: number;

  @Column({ name: 'retry_delay_ms', type: 'int', default: 1000 })
  retryDelayMs: number;

  /** Time of the first failed attempt since the last success (null while healthy): drives WEBHOOK_DISABLE_AFTER. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
