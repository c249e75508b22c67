import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { EventType } from '../event-types.js';

/**
 * A domain event, written in the same transaction as the change that caused it. The webhook
 * relay turns unpublished rows into deliveries and marks them published; nothing is lost when
 * Redis or a worker is down, because the row stays until it is relayed.
 */
@Entity({ name: 'outbox_events' })
export class OutboxEvent {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @CreateDateColumn({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt: Date | null;

  /** W3C traceparent of the span that wrote the event (traces on), sent on by its webhook deliveries. */
  @Column({ type: 'varchar', length: 55, nullable: true })
  traceparent: string | null;
}
