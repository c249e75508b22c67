import { randomUUID } from 'node:crypto';
import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type Repository } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box.js';
import { parseDateFilter, parseIsoDate } from '../common/date-range.js';
import { isUuid } from '../common/ids/uuid.js';
import { isUniqueViolation } from '../database/postgres-errors.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { DeliveryClient } from './delivery/delivery-client.js';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import type { ListWebhookLogsQuery } from './dto/list-webhook-logs.query.js';
import type { ListWebhooksQuery } from './dto/list-webhooks.query.js';
import type { TestWebhookDto } from './dto/test-webhook.dto.js';
import type { UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { WebhookDeliveryAttempt } from './entities/webhook-delivery-attempt.entity.js';
import { Webhook } from './entities/webhook.entity.js';
import { TargetNotAllowedError } from './ssrf/target-resolver.js';
import { WebhookDeliveriesService, type AttemptReport } from './webhook-deliveries.service.js';
import { generateSecret, parseEventTypes, parseRetryPolicy, parseSecret, parseWebhookUrl } from './webhook-input.js';
import {
  InvalidEventTypesError,
  WebhookAlreadyExistsError,
  WebhookInactiveError,
  WebhookLogNotFoundError,
  WebhookNotFoundError,
  WebhookValidationFailedError,
} from './webhooks.errors.js';
import { deliverJobOptions, WEBHOOKS_QUEUE, WebhookJobs } from './webhooks.queue.js';

/** How long a rotated-out secret keeps signing. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

const UNIQUE_URL = 'uq_webhooks_org_url';

/** Subscriptions: CRUD with the field rules of webhook-input.ts, the host check, logs and the test send. */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectRepository(Webhook) private readonly webhooks: Repository<Webhook>,
    @InjectRepository(WebhookDeliveryAttempt) private readonly attempts: Repository<WebhookDeliveryAttempt>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secretBox: SecretBox,
    private readonly client: DeliveryClient,
    private readonly deliveries: WebhookDeliveriesService,
    @InjectQueue(WEBHOOKS_QUEUE) private readonly queue: Queue,
  ) {}

  async list(organizationId: string, query: ListWebhooksQuery): Promise<[Webhook[], number]> {
    // One WHERE for the page and its count; the count is hand-written so it reads no wide rows.
    const where = `w.organization_id = $1 AND ($2::boolean IS NULL OR w.active = $2)
      AND ($3::text IS NULL OR $3 = ANY (w.events) OR '*' = ANY (w.events) OR split_part($3, '.', 1) || '.*' = ANY (w.events))`;
    const params = [organizationId, query.active ?? null, query.event_type ?? null];
    const [{ total }] = (await this.dataSource.query(`SELECT count(*)::int AS total FROM webhooks w WHERE ${where}`, params)) as { total: number }[];
    if (total === 0 || query.offset >= total) return [[], total];
    const ids = (await this.dataSource.query(
      `SELECT w.id FROM webhooks w WHERE ${where} ORDER BY w.created_at DESC, w.id DESC LIMIT $4 OFFSET $5`,
      [...params, query.limit, query.offset],
    )) as { id: string }[];
    const rows = await this.webhooks.findBy(ids.map(({ id }) => ({ id, organizationId })));
    const byId = new Map(rows.map((w) => [w.id, w]));
    return [ids.map(({ id }) => byId.get(id)).filter((w): w is Webhook => w !== undefined), total];
  }

  /** The caller's webhook, or 404 as if absent (another organization's, or a malformed id). */
  async getOwned(organizationId: string, id: string): Promise<Webhook> {
    if (!isUuid(id)) throw new WebhookNotFoundError();
    const webhook = await this.webhooks.findOne({ where: { id, organizationId } });
    if (!webhook) throw new WebhookNotFoundError();
    return webhook;
  }

  secretOf(webhook: Webhook): string {
    return this.secretBox.open(webhook.secretEncrypted, webhook.id);
  }

  async create(organizationId: string, dto: CreateWebhookDto): Promise<{ webhook: Webhook; secret: string }> {
    const url = parseWebhookUrl(dto.url);
    const events = parseEventTypes(dto.events);
    const policy = parseRetryPolicy(dto.retry_policy);
    const secret = dto.secret !== undefined ? parseSecret(dto.secret) : generateSecret();
    await this.assertUrlFree(organizationId, url.href);
    await this.assertReachable(url);
    const id = randomUUID();
    try {
      const webhook = await this.webhooks.save(
        this.webhooks.create({
          id,
          organizationId,
          name: dto.name,
          url: url.href,
          events,
          secretEncrypted: this.secretBox.seal(secret, id),
          active: dto.active ?? true,
          maxRetries: policy.max_retries,
          retryDelayMs: policy.retry_delay_ms,
        }),
      );
      return { webhook, secret };
    } catch (error) {
      if (isUniqueViolation(error, UNIQUE_URL)) throw new WebhookAlreadyExistsError();
      throw error;
    }
  }

  async update(organizationId: string, id: string, dto: UpdateWebhookDto): Promise<{ webhook: Webhook; secret: string }> {
    const webhook = await this.getOwned(organizationId, id);
    const url = dto.url !== undefined ? parseWebhookUrl(dto.url) : undefined;
    const events = dto.events !== undefined ? parseEventTypes(dto.events) : undefined;
    const policy = parseRetryPolicy(dto.retry_policy, { max_retries: webhook.maxRetries, retry_delay_ms: webhook.retryDelayMs });
    const secret = dto.secret !== undefined ? parseSecret(dto.secret) : undefined;
    if (url && url.href !== webhook.url) {
      await this.assertUrlFree(organizationId, url.href, webhook.id);
      await this.assertReachable(url);
    }
    const changes: Partial<Webhook> = { maxRetries: policy.max_retries, retryDelayMs: policy.retry_delay_ms, updatedAt: new Date() };
    if (dto.name !== undefined) changes.name = dto.name;
    if (url) changes.url = url.href;
    if (events) changes.events = events;
    if (dto.active !== undefined) changes.active = dto.active;
    if (secret !== undefined) changes.secretEncrypted = this.secretBox.seal(secret, webhook.id);
    try {
      await this.webhooks.update({ id: webhook.id, organizationId }, changes);
    } catch (error) {
      if (isUniqueViolation(error, UNIQUE_URL)) throw new WebhookAlreadyExistsError();
      throw error;
    }
    const saved = await this.getOwned(organizationId, id);
    return { webhook: saved, secret: this.secretOf(saved) };
  }

  async delete(organizationId: string, id: string): Promise<void> {
    const webhook = await this.getOwned(organizationId, id);
    await this.webhooks.delete({ id: webhook.id, organizationId });
  }

  async logs(organizationId: string, id: string, query: ListWebhookLogsQuery): Promise<[WebhookDeliveryAttempt[], number]> {
    const webhook = await this.getOwned(organizationId, id);
    const range = parseDateFilter(query);
    const where = `a.webhook_id = $1 AND ($2::text IS NULL OR a.status = $2)
      AND ($3::timestamptz IS NULL OR a.delivered_at >= $3) AND ($4::timestamptz IS NULL OR a.delivered_at <= $4)`;
    const params = [webhook.id, query.status ?? null, range.start ?? null, range.end ?? null];
    const [{ total }] = (await this.dataSource.query(`SELECT count(*)::int AS total FROM webhook_delivery_attempts a WHERE ${where}`, params)) as { total: number }[];
    if (total === 0 || query.offset >= total) return [[], total];
    // Ids are UUIDv7: newest first by key.
    const rows = await this.attempts
      .createQueryBuilder('a')
      .where('a.webhookId = :id', { id: webhook.id })
      .andWhere(query.status ? 'a.status = :status' : 'TRUE', { status: query.status })
      .andWhere(range.start ? 'a.deliveredAt >= :start' : 'TRUE', { start: range.start })
      .andWhere(range.end ? 'a.deliveredAt <= :end' : 'TRUE', { end: range.end })
      .orderBy('a.id', 'DESC')
      .skip(query.offset)
      .take(query.limit)
      .getMany();
    return [rows, total];
  }

  async test(organizationId: string, id: string, dto: TestWebhookDto): Promise<AttemptReport> {
    const webhook = await this.getOwned(organizationId, id);
    if (!(EVENT_TYPES as readonly string[]).includes(dto.event_type)) {
      throw new InvalidEventTypesError(`event_type must be one of ${EVENT_TYPES.join(', ')}`, 'event_type');
    }
    return this.deliveries.test(webhook, dto.event_type, dto.test_data ?? {});
  }

  /** A new generated secret; the old one keeps signing (second signature) for 24 hours. */
  async rotateSecret(organizationId: string, id: string): Promise<{ webhook: Webhook; secret: string }> {
    const webhook = await this.getOwned(organizationId, id);
    const secret = generateSecret();
    await this.webhooks.update(
      { id: webhook.id, organizationId },
      {
        secretEncrypted: this.secretBox.seal(secret, webhook.id),
        previousSecretEncrypted: webhook.secretEncrypted,
        previousSecretExpiresAt: new Date(Date.now() + ROTATION_GRACE_MS),
        updatedAt: new Date(),
      },
    );
    return { webhook: await this.getOwned(organizationId, id), secret };
  }

  /** Queues a new delivery of the event of a log entry. */
  async resend(organizationId: string, id: string, logId: string): Promise<string> {
    const webhook = await this.activeOwned(organizationId, id);
    if (!isUuid(logId)) throw new WebhookLogNotFoundError();
    const log = await this.attempts.findOne({ where: { id: logId, webhookId: webhook.id } });
    if (!log) throw new WebhookLogNotFoundError();
    const [deliveryId] = await this.deliveries.redeliver(webhook.id, [log.deliveryId]);
    await this.enqueue([deliveryId as string]);
    return deliveryId as string;
  }

  /** Queues again every event whose delivery to this webhook ended failed since `since` (and was not delivered later). */
  async recover(organizationId: string, id: string, since: string): Promise<number> {
    const webhook = await this.activeOwned(organizationId, id);
    const from = parseIsoDate(since, 'since');
    const rows = (await this.dataSource.query(
      `SELECT DISTINCT ON (d.event_id) d.id FROM webhook_deliveries d
        WHERE d.webhook_id = $1 AND d.status = 'failed' AND d.completed_at >= $2
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries ok WHERE ok.webhook_id = $1 AND ok.event_id = d.event_id AND ok.status IN ('delivered', 'pending'))
        ORDER BY d.event_id, d.id DESC`,
      [webhook.id, from],
    )) as { id: string }[];
    const ids = await this.deliveries.redeliver(webhook.id, rows.map((r) => r.id));
    await this.enqueue(ids);
    return ids.length;
  }

  private async activeOwned(organizationId: string, id: string): Promise<Webhook> {
    const webhook = await this.getOwned(organizationId, id);
    if (!webhook.active) throw new WebhookInactiveError();
    return webhook;
  }

  private async enqueue(ids: string[]): Promise<void> {
    // The delivery rows are committed: a failure here is healed by the relay's sweep.
    await this.queue
      .addBulk(ids.map((deliveryId) => ({ name: WebhookJobs.deliver, data: { deliveryId }, opts: deliverJobOptions(deliveryId) })))
      .catch(() => undefined);
  }

  private async assertUrlFree(organizationId: string, url: string, exceptId?: string): Promise<void> {
    const rows = (await this.dataSource.query(`SELECT id FROM webhooks WHERE organization_id = $1 AND url = $2`, [organizationId, url])) as { id: string }[];
    if (rows.some((r) => r.id !== exceptId)) throw new WebhookAlreadyExistsError();
  }

  /** The delivery-time host check, at create and update: 422 when the host does not resolve or only to refused addresses. */
  private async assertReachable(url: URL): Promise<void> {
    try {
      await this.client.checkHost(url.hostname);
    } catch (error) {
      if (error instanceof TargetNotAllowedError) throw new WebhookValidationFailedError('url resolves to an address deliveries may not reach');
      throw new WebhookValidationFailedError('url host does not resolve');
    }
  }
}
