import { Column, Entity, PrimaryColumn } from 'typeorm';

export const ATTEMPT_STATUSES = ['delivered', 'retrying', 'failed'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** One attempt of a delivery: a row of the webhook's delivery log. Time-ordered id (UUIDv7). */
@Entity({ name: 'webhook_delivery_attempts' })
export class WebhookDeliveryAttempt {
  @PrimaryColumn({ type: 'uuid', default: () => 'uuid_v7()' })
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @Column({ name: 'event_type', type: 'varchar', length: 64 })
  eventType: string;

  /** 1-based. */
  @Column({ type: 'int' })
  attempt: number;

  @Column({ type: 'varchar', length: 16 })
  status: AttemptStatus;

  /** null on network errors, timeouts and refused targets. */
  @Column({ name: 'response_code', type: 'int', nullable: true })
  responseCode: number | null;

  @Column({ name: 'response_time_ms', type: 'int', nullable: true })
  responseTimeMs: number | null;

  /** The attempt's time. */
  @Column({ name: 'delivered_at', type: 'timestamptz' })
  deliveredAt: Date;

  @Column({ name: 'error_message', type: 'varchar', length: 500, nullable: true })
  errorMessage: string | null;
}
