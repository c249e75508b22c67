import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box.js';
import { AppConfig } from '../config/app-config.js';
import { DeliveryClient } from './delivery/delivery-client.js';
import { outcomeOf, retryDelayMs, type AttemptResult } from './delivery/outcome.js';
import { deliveryHeaders, type DeliveryPayload } from './delivery/signing.js';
import type { AttemptStatus } from './entities/webhook-delivery-attempt.entity.js';
import type { Webhook } from './entities/webhook.entity.js';
import { webhookAttempts, webhookAttemptSeconds, webhookRelayLagSeconds } from './webhooks.metrics.js';

/** A delivery as an attempt reads it (raw row of webhook_deliveries). */
interface DeliveryRow {
  id: string;
  organization_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  event_timestamp: Date;
  data: Record<string, unknown>;
  attempts: number;
}

interface WebhookRow {
  id: string;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  active: boolean;
  max_retries: number;
  retry_delay_ms: number;
  failing_since: Date | string | null;
}

export interface AttemptReport {
  deliveryId: string;
  status: AttemptStatus;
  result: AttemptResult;
  attemptedAt: Date;
  /** Set when the delivery is to be retried. */
  retryInMs?: number;
}

/**
 * One attempt of a delivery, as DESIGN §8 rules: sign, send, classify, write one log row, update the
 * delivery, disable the webhook on 410. Used by the queue processor and, synchronously, by the test
 * endpoint (one attempt, never retried).
 */
@Injectable()
export class WebhookDeliveriesService {
  private readonly logger = new Logger(WebhookDeliveriesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secretBox: SecretBox,
    private readonly client: DeliveryClient,
    private readonly config: AppConfig,
  ) {}

  /**
   * Makes the due attempt of a pending delivery. Returns what happened, `{ busy }` when another
   * worker holds its lease (one delivery never runs twice at once), or null when it is finished.
   */
  async attempt(deliveryId: string): Promise<AttemptReport | { busyForMs: number } | null> {
    const leaseMs = this.config.webhooks.timeoutMs + 5_000;
    // Lease and read the webhook in one round trip (the webhook as it is now: policy changes apply).
    const leased = (await this.dataSource.query(
      `UPDATE webhook_deliveries d SET locked_until = now() + $2::int * interval '1 millisecond'
        WHERE d.id = $1 AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < now())
        RETURNING d.id, d.organization_id, d.webhook_id, d.event_id, d.event_type, d.event_timestamp, d.data, d.attempts,
                  (SELECT row_to_json(w) FROM (SELECT id, url, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at,
                                                      active, max_retries, retry_delay_ms, failing_since FROM webhooks WHERE id = d.webhook_id) w) AS webhook`,
      [deliveryId, leaseMs],
    )) as [(DeliveryRow & { webhook: WebhookRow | null })[], number];
    const delivery = leased[0][0];
    if (!delivery) {
      const [held] = (await this.dataSource.query(
        `SELECT GREATEST(0, EXTRACT(EPOCH FROM (locked_until - now())) * 1000)::int AS ms FROM webhook_deliveries WHERE id = $1 AND status = 'pending'`,
        [deliveryId],
      )) as { ms: number }[];
      return held ? { busyForMs: Math.max(1000, held.ms) } : null;
    }
    const webhook = delivery.webhook;
    if (!webhook || !webhook.active) {
      // Disabled or deleted since the event: nothing is sent; the delivery ends without an attempt.
      await this.dataSource.query(`UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL, completed_at = now() WHERE id = $1`, [deliveryId]);
      return null;
    }
    return this.send(webhook, delivery, true);
  }

  /** The test endpoint: one signed attempt of a new delivery, logged as attempt 1, never retried. */
  async test(webhook: Webhook, eventType: string, data: Record<string, unknown>): Promise<AttemptReport> {
    const [row] = (await this.dataSource.query(
      `INSERT INTO webhook_deliveries (organization_id, webhook_id, event_id, event_type, event_timestamp, data, status, attempts, locked_until)
       VALUES ($1, $2, gen_random_uuid(), $3, now(), $4::jsonb, 'pending', 0, now() + interval '1 minute')
       RETURNING id, organization_id, webhook_id, event_id, event_type, event_timestamp, data, attempts`,
      [webhook.organizationId, webhook.id, eventType, JSON.stringify(data)],
    )) as DeliveryRow[];
    const webhookRow: WebhookRow = {
      id: webhook.id,
      url: webhook.url,
      secret_encrypted: webhook.secretEncrypted,
      previous_secret_encrypted: webhook.previousSecretEncrypted,
      previous_secret_expires_at: webhook.previousSecretExpiresAt,
      active: webhook.active,
      max_retries: 0,
      retry_delay_ms: webhook.retryDelayMs,
      failing_since: webhook.failingSince,
    };
    return this.send(webhookRow, row as DeliveryRow, false);
  }

  /** New pending deliveries of the events of the given deliveries (resend, recover); returns their ids. */
  async redeliver(webhookId: string, deliveryIds: string[]): Promise<string[]> {
    if (deliveryIds.length === 0) return [];
    const rows = (await this.dataSource.query(
      `INSERT INTO webhook_deliveries (organization_id, webhook_id, event_id, event_type, event_timestamp, data, status, next_attempt_at)
       SELECT organization_id, $1, event_id, event_type, event_timestamp, data, 'pending', now()
         FROM webhook_deliveries WHERE id = ANY ($2::uuid[]) AND webhook_id = $1
       RETURNING id`,
      [webhookId, deliveryIds],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  private async send(webhook: WebhookRow, delivery: DeliveryRow, retries: boolean): Promise<AttemptReport> {
    const attempt = delivery.attempts + 1;
    const payload: DeliveryPayload = {
      id: delivery.event_id,
      type: delivery.event_type,
      timestamp: new Date(delivery.event_timestamp).toISOString(),
      data: delivery.data,
      metadata: { webhook_id: webhook.id, retry_count: delivery.attempts, version: '1' },
    };
    const body = JSON.stringify(payload);
    const secrets = [this.secretBox.open(webhook.secret_encrypted, webhook.id)];
    // During a rotation's grace period the old secret signs too, so receivers can roll over.
    if (webhook.previous_secret_encrypted && webhook.previous_secret_expires_at && new Date(webhook.previous_secret_expires_at) > new Date()) {
      secrets.push(this.secretBox.open(webhook.previous_secret_encrypted, webhook.id));
    }
    const attemptedAt = new Date();
    if (attempt === 1 && retries) webhookRelayLagSeconds.observe((attemptedAt.getTime() - new Date(delivery.event_timestamp).getTime()) / 1000);
    const result = await this.client.send(new URL(webhook.url), deliveryHeaders(secrets, delivery.id, delivery.event_type, body, attemptedAt), body);
    webhookAttemptSeconds.observe(result.responseTimeMs / 1000);

    const outcome = outcomeOf(result);
    let status: AttemptStatus = outcome === 'delivered' ? 'delivered' : 'failed';
    let retryInMs: number | undefined;
    if (outcome === 'retry' && retries && attempt <= webhook.max_retries) {
      status = 'retrying';
      retryInMs = retryDelayMs(attempt, webhook.retry_delay_ms, result.retryAfterMs);
    }
    const gone = result.statusCode === 410;
    // Every attempt since `failing_since` (the first failure after the last success) has failed.
    const failingTooLong =
      status === 'failed' && retries && !gone && webhook.failing_since !== null &&
      attemptedAt.getTime() - new Date(webhook.failing_since).getTime() >= this.config.webhooks.disableAfterMs;
    const disable = gone || failingTooLong;
    const errorMessage = gone
      ? 'HTTP 410 Gone: webhook disabled'
      : failingTooLong
        ? `${result.error}; webhook disabled: every delivery failed for ${Math.round(this.config.webhooks.disableAfterMs / 1000)} s`
        : result.error;
    // One statement: the log row, the delivery's new state and, on 410 or too long failing, the webhook.
    await this.dataSource.query(
      `WITH attempt AS (
         INSERT INTO webhook_delivery_attempts
           (organization_id, webhook_id, delivery_id, event_type, attempt, status, response_code, response_time_ms, delivered_at, error_message)
         VALUES ($1, $2, $3, $4, $5, $6::varchar, $7, $8, $9, $10)
       ), hook AS (
         -- Writes the webhook row only when its health changes (or to disable it), not on every attempt.
         UPDATE webhooks
            SET failing_since = CASE WHEN $6::varchar = 'delivered' THEN NULL ELSE COALESCE(failing_since, $9) END,
                active = active AND NOT $13::boolean,
                updated_at = CASE WHEN $13::boolean THEN now() ELSE updated_at END
          WHERE id = $2 AND ($13::boolean OR (failing_since IS NULL) = ($6::varchar <> 'delivered'))
       )
       UPDATE webhook_deliveries
          SET attempts = $5, status = $11::varchar, locked_until = NULL,
              next_attempt_at = CASE WHEN $11::varchar = 'pending' THEN now() + $12::int * interval '1 millisecond' END,
              completed_at = CASE WHEN $11::varchar = 'pending' THEN NULL ELSE now() END
        WHERE id = $3`,
      [
        delivery.organization_id, webhook.id, delivery.id, delivery.event_type, attempt, status, result.statusCode, result.responseTimeMs,
        attemptedAt, errorMessage, status === 'retrying' ? 'pending' : status, retryInMs ?? 0, disable,
      ],
    );
    if (disable) this.logger.warn(`Webhook ${webhook.id} disabled: ${errorMessage}`);
    webhookAttempts.inc({ status });
    return { deliveryId: delivery.id, status, result, attemptedAt, retryInMs };
  }
}
