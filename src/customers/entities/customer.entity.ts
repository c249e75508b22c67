import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A person the service talks to, known by the client's own id (`customer_id` in the API). */
@Entity({ name: 'customers' })
@Index('uq_customers_org_external', ['organizationId', 'externalId'], { unique: true })
export class Customer {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** The client's identifier of the customer (phone number, handle, …): the API's `customer_id`. */
  @Column({ name: 'external_id', type: 'varchar', length: 200 })
  externalId: string;

  /** The channel of the latest contact. */
  @Column({ type: 'varchar', length: 32, nullable: true })
  channel: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true })
  language: string | null;

  /** Answers collected by form nodes, by field name. */
  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  attributes: Record<string, unknown>;

  @Column({ name: 'first_seen_at', type: 'timestamptz' })
  firstSeenAt: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt: Date;

  /** Why a person took the conversation over (POST /v1/customers/{id}/handoff), while a handoff is recorded. */
  @Column({ name: 'handoff_reason', type: 'varchar', length: 500, nullable: true })
  handoffReason: string | null;

  @Column({ name: 'handoff_started_at', type: 'timestamptz', nullable: true })
  handoffStartedAt: Date | null;

  /** The handoff is active while this is in the future (compared with the database's now() on every read). */
  @Column({ name: 'handoff_ends_at', type: 'timestamptz', nullable: true })
  handoffEndsAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
