import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box.js';
import { AppConfig } from '../config/app-config.js';
import { SqlStatement } from '../database/sql-statement.js';
import { DeliveryClient } from './delivery/delivery-client.js';
import { outcomeOf, retryDelayMs, type AttemptResult } from './delivery/outcome.js';
import { deliveryHeaders, type DeliveryPayload } from './delivery/signing.js';
import { Batcher } from '../common/batcher.js';
import type { AttemptStatus } from './entities/webhook-delivery-attempt.entity.js';
import type { Webhook } from './entities/webhook.entity.js';
import { countWebhookResponse, webhookAttempts, webhookAttemptSeconds, webhookRelayLagSeconds } from './webhooks.metrics.js';
import { isoTime } from '../common/iso-time.js';
import { contextFromTraceparent, currentTraceparent, inSpan, SpanKind, tracingEnabled } from '../common/tracing/trace-context.js';

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
  /** W3C traceparent of the span that wrote the event (traces on). */
  traceparent?: string | null;
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

/** What one attempt writes: its log row and the delivery's new state (and, maybe, the webhook's health). */
export interface AttemptRecord {
  organizationId: string;
  webhookId: string;
  deliveryId: string;
  eventType: string;
  attempt: number;
  status: AttemptStatus;
  responseCode: number | null;
  responseTimeMs: number;
  attemptedAt: Date;
  errorMessage: string | null;
  deliveryStatus: 'pending' | 'delivered' | 'failed';
  retryInMs: number;
  disable: boolean;
}

/**
 * Lease: deliveries still pending and not leased get `locked_until`; returned with their webhook as
 * it is now (null columns when deleted), so a policy change applies to attempts not yet made.
 */
const LEASE_SQL = new SqlStatement<DeliveryRow & Record<string, unknown>>(`
  WITH probed AS (
    -- Each delivery locked by a probe by key, in id order, its state read as it is now. Checked in the update
    -- instead, the state let the planner read the index of every pending delivery (idx_webhook_deliveries_due).
    SELECT d.id, d.status, d.locked_until FROM (SELECT id FROM unnest($1::uuid[]) AS id ORDER BY id) i
     CROSS JOIN LATERAL (SELECT id, status, locked_until FROM webhook_deliveries WHERE id = i.id LIMIT 1 FOR NO KEY UPDATE) d
  ), leased AS (
    UPDATE webhook_deliveries d SET locked_until = now() + $2::int * interval '1 millisecond'
      FROM probed p
     WHERE d.id = ANY (ARRAY[p.id]) AND p.status = 'pending' AND (p.locked_until IS NULL OR p.locked_until < now())
    RETURNING d.id, d.organization_id, d.webhook_id, d.event_id, d.event_type, d.event_timestamp, d.data, d.attempts, d.traceparent
  )
  SELECT l.*, w.id AS w_id, w.url AS w_url, w.secret_encrypted AS w_secret_encrypted,
         w.previous_secret_encrypted AS w_previous_secret_encrypted, w.previous_secret_expires_at AS w_previous_secret_expires_at,
         w.active AS w_active, w.max_retries AS w_max_retries, w.retry_delay_ms AS w_retry_delay_ms, w.failing_since AS w_failing_since
    FROM leased l LEFT JOIN webhooks w ON w.id = l.webhook_id`,
  // Primary-key lookups only, whatever the tables' sizes: planned once per connection. Planning was
  // most of a small batch's server time (EXPLAIN: 0.4 ms planning against 0.56 ms executing 20 rows).
  { prepareAs: 'webhooks.lease' },
);

/**
 * Records attempts, one statement for a batch: the log rows, the deliveries' new states and, for a
 * webhook whose health changes (first failure after a success, first success after failures) or
 * that is to be disabled (410, failing too long), its row; a busy healthy webhook's row is never written.
 */
const RECORD_SQL = new SqlStatement<never>(`
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::varchar[], $5::int[], $6::varchar[], $7::int[], $8::int[],
                         $9::timestamptz[], $10::varchar[], $11::varchar[], $12::int[])
      AS i(organization_id, webhook_id, delivery_id, event_type, attempt, status, response_code, response_time_ms,
           delivered_at, error_message, delivery_status, retry_in_ms)
  ), attempt AS (
    INSERT INTO webhook_delivery_attempts
      (organization_id, webhook_id, delivery_id, event_type, attempt, status, response_code, response_time_ms, delivered_at, error_message)
    SELECT organization_id, webhook_id, delivery_id, event_type, attempt, status, response_code, response_time_ms, delivered_at, error_message FROM input
  ), health AS (
    SELECT * FROM unnest($13::uuid[], $14::boolean[], $15::timestamptz[], $16::boolean[]) AS h(webhook_id, failing, first_failure, disable)
  ), hook AS (
    UPDATE webhooks w
       SET failing_since = CASE WHEN h.failing THEN COALESCE(w.failing_since, h.first_failure) END,
           active = w.active AND NOT h.disable,
           updated_at = CASE WHEN h.disable THEN now() ELSE w.updated_at END
      FROM health h
     WHERE w.id = h.webhook_id AND (h.disable OR (w.failing_since IS NULL) = h.failing)
  )
  UPDATE webhook_deliveries d
     SET attempts = i.attempt, status = i.delivery_status, locked_until = NULL,
         next_attempt_at = CASE WHEN i.delivery_status = 'pending' THEN now() + i.retry_in_ms * interval '1 millisecond' END,
         completed_at = CASE WHEN i.delivery_status = 'pending' THEN NULL ELSE now() END
    FROM input i
   WHERE d.id = ANY (ARRAY[i.delivery_id])`,
  // The batch is joined to the deliveries by primary key only (= ANY (ARRAY[..]): never hash-joined to a scan of
  // the months' partitions, whatever the statistics were when the connection planned it): planned once per connection.
  { prepareAs: 'webhooks.record' },
);

/** Per webhook of a batch, its health after the batch's attempts (in time order). */
export function healthOf(records: readonly Pick<AttemptRecord, 'webhookId' | 'status' | 'attemptedAt' | 'disable'>[]) {
  const byWebhook = new Map<string, { failing: boolean; firstFailure: Date | null; disable: boolean }>();
  for (const r of [...records].sort((a, b) => a.attemptedAt.getTime() - b.attemptedAt.getTime())) {
    const h = byWebhook.get(r.webhookId) ?? { failing: false, firstFailure: null, disable: false };
    if (r.status === 'delivered') {
      h.failing = false;
      h.firstFailure = null;
    } else {
      if (!h.failing) h.firstFailure = r.attemptedAt;
      h.failing = true;
    }
    h.disable ||= r.disable;
    byWebhook.set(r.webhookId, h);
  }
  return byWebhook;
}

/** SQLSTATE classes one row can cause (22 data exception, 23 integrity violation): worth retrying a batch row by row. */
function oneRowCouldCause(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = String(e.driverError?.code ?? e.code ?? '');
  return code.startsWith('22') || code.startsWith('23');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Opened secrets by webhook id and sealed value: a changed secret is a new sealed value, so never stale. */
class OpenedSecrets {
  private readonly opened = new Map<string, string>();

  constructor(private readonly open: (sealed: string, context: string) => string) {}

  get(sealed: string, webhookId: string): string {
    const key = `${webhookId}:${sealed}`;
    let plain = this.opened.get(key);
    if (plain === undefined) {
      plain = this.open(sealed, webhookId);
      if (this.opened.size >= 10_000) this.opened.clear();
      this.opened.set(key, plain);
    }
    return plain;
  }
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
 * One attempt of a delivery, as docs/API.md, "Outbound webhooks", rules: sign, send, classify, write one log row, update the
 * delivery, disable the webhook on 410. Used by the queue processor and, synchronously, by the test
 * endpoint (one attempt, never retried).
 */
@Injectable()
export class WebhookDeliveriesService {
  private readonly logger = new Logger(WebhookDeliveriesService.name);
  /** Leases of concurrent attempts, one statement per batch (two may run at once). */
  private readonly leases = new Batcher<string, (DeliveryRow & { webhook: WebhookRow | null }) | undefined>((ids) => this.leaseBatch(ids), {
    maxBatch: 500,
    maxInFlight: 2,
    retrySingly: oneRowCouldCause,
    gather: 'one-turn',
  });
  /** Attempt records, one statement per batch (one at a time, so webhook rows are never locked in two orders). */
  private readonly records = new Batcher<AttemptRecord, void>((records) => this.recordBatch(records), { maxBatch: 500, retrySingly: oneRowCouldCause, gather: 'one-turn' });
  private readonly secrets: OpenedSecrets;
  private readonly urls = new Map<string, URL>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    secretBox: SecretBox,
    private readonly client: DeliveryClient,
    private readonly config: AppConfig,
  ) {
    this.secrets = new OpenedSecrets((sealed, context) => secretBox.open(sealed, context));
  }

  /**
   * Makes the due attempt of a pending delivery. Returns what happened, `{ busy }` when another
   * worker holds its lease (one delivery never runs twice at once), or null when it is finished.
   */
  async attempt(deliveryId: string): Promise<AttemptReport | { busyForMs: number } | null> {
    // Not a delivery id: nothing to do (and it must not fail the batch of leases it would join).
    if (!UUID.test(deliveryId)) return null;
    const delivery = await this.leases.submit(deliveryId);
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

  /** Leases a batch of deliveries; one result per id (undefined: not pending, or leased elsewhere). */
  private async leaseBatch(ids: string[]): Promise<((DeliveryRow & { webhook: WebhookRow | null }) | undefined)[]> {
    const leaseMs = this.config.webhooks.timeoutMs + 5_000;
    const rows = await LEASE_SQL.run(this.dataSource, [[...new Set(ids)], leaseMs]);
    const byId = new Map<string, DeliveryRow & { webhook: WebhookRow | null }>();
    for (const r of rows) {
      const webhook: WebhookRow | null =
        r.w_id === null
          ? null
          : {
              id: r.w_id as string,
              url: r.w_url as string,
              secret_encrypted: r.w_secret_encrypted as string,
              previous_secret_encrypted: r.w_previous_secret_encrypted as string | null,
              previous_secret_expires_at: r.w_previous_secret_expires_at as Date | null,
              active: r.w_active as boolean,
              max_retries: r.w_max_retries as number,
              retry_delay_ms: r.w_retry_delay_ms as number,
              failing_since: r.w_failing_since as Date | null,
            };
      byId.set(r.id, {
        id: r.id, organization_id: r.organization_id, webhook_id: r.webhook_id, event_id: r.event_id, event_type: r.event_type,
        event_timestamp: r.event_timestamp, data: r.data, attempts: r.attempts, traceparent: r.traceparent, webhook,
      });
    }
    // One lease per row: should the same id be asked for twice in a batch (a stalled job re-run), only the first gets it.
    return ids.map((id) => {
      const row = byId.get(id);
      byId.delete(id);
      return row;
    });
  }

  private async recordBatch(records: AttemptRecord[]): Promise<void[]> {
    const health = healthOf(records);
    const col = <K extends keyof AttemptRecord>(key: K) => records.map((r) => r[key]);
    await RECORD_SQL.run(this.dataSource, [
      col('organizationId'), col('webhookId'), col('deliveryId'), col('eventType'), col('attempt'), col('status'), col('responseCode'),
      col('responseTimeMs'), col('attemptedAt'), col('errorMessage'), col('deliveryStatus'), col('retryInMs'),
      [...health.keys()], [...health.values()].map((h) => h.failing), [...health.values()].map((h) => h.firstFailure), [...health.values()].map((h) => h.disable),
    ]);
    return records.map(() => undefined);
  }

  private url(raw: string): URL {
    let url = this.urls.get(raw);
    if (!url) {
      url = new URL(raw);
      if (this.urls.size >= 10_000) this.urls.clear();
      this.urls.set(raw, url);
    }
    return url;
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

  /**
   * Traces on: the attempt is a client span, child of the span that wrote the event (the run), and the
   * receiver gets its W3C `traceparent` header (as Svix sends one). Ids, type, attempt and status only.
   */
  private sendTraced(webhook: WebhookRow, delivery: DeliveryRow, attempt: number, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    return inSpan(
      'webhook.deliver',
      { 'webhook.id': webhook.id, 'webhook.delivery_id': delivery.id, 'webhook.event_type': delivery.event_type, 'webhook.attempt': attempt },
      async (span) => {
        const traceparent = currentTraceparent();
        const result = await this.client.send(this.url(webhook.url), traceparent ? { ...headers, traceparent } : headers, body);
        span?.setAttributes({ 'http.response.status_code': result.statusCode ?? 0, 'webhook.outcome': outcomeOf(result) });
        return result;
      },
      { kind: SpanKind.CLIENT, parent: delivery.traceparent ? contextFromTraceparent(delivery.traceparent) : undefined },
    );
  }

  private async send(webhook: WebhookRow, delivery: DeliveryRow, retries: boolean): Promise<AttemptReport> {
    const attempt = delivery.attempts + 1;
    const payload: DeliveryPayload = {
      id: delivery.event_id,
      type: delivery.event_type,
      timestamp: isoTime(new Date(delivery.event_timestamp)),
      data: delivery.data,
      metadata: { webhook_id: webhook.id, retry_count: delivery.attempts, version: '1' },
    };
    const body = JSON.stringify(payload);
    const secrets = [this.secrets.get(webhook.secret_encrypted, webhook.id)];
    // During a rotation's grace period the old secret signs too, so receivers can roll over.
    if (webhook.previous_secret_encrypted && webhook.previous_secret_expires_at && new Date(webhook.previous_secret_expires_at) > new Date()) {
      secrets.push(this.secrets.get(webhook.previous_secret_encrypted, webhook.id));
    }
    const attemptedAt = new Date();
    if (attempt === 1 && retries) webhookRelayLagSeconds.observe((attemptedAt.getTime() - new Date(delivery.event_timestamp).getTime()) / 1000);
    const headers = deliveryHeaders(secrets, delivery.id, delivery.event_type, body, attemptedAt);
    const result = tracingEnabled() ? await this.sendTraced(webhook, delivery, attempt, headers, body) : await this.client.send(this.url(webhook.url), headers, body);
    webhookAttemptSeconds.observe(result.responseTimeMs / 1000);
    countWebhookResponse(result);

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
    // The log row, the delivery's new state and, on 410 or too long failing, the webhook: written
    // together with the concurrent attempts' (one statement), and awaited, so the job ends only after.
    await this.records.submit({
      organizationId: delivery.organization_id,
      webhookId: webhook.id,
      deliveryId: delivery.id,
      eventType: delivery.event_type,
      attempt,
      status,
      responseCode: result.statusCode,
      responseTimeMs: result.responseTimeMs,
      attemptedAt,
      errorMessage,
      deliveryStatus: status === 'retrying' ? 'pending' : status,
      retryInMs: retryInMs ?? 0,
      disable,
    });
    if (disable) this.logger.warn(`Webhook ${webhook.id} disabled: ${errorMessage}`);
    webhookAttempts.inc({ status });
    return { deliveryId: delivery.id, status, result, attemptedAt, retryInMs };
  }
}
