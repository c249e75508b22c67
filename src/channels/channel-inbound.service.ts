import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { uuidv7 } from '../common/ids/uuid-v7.js';
import { isoTime } from '../common/iso-time.js';
import { AppConfig } from '../config/app-config.js';
import { isForeignKeyViolation } from '../database/postgres-errors.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import { RateLimiter, type RateLimitResult } from '../rate-limits/rate-limiter.js';
import { RateLimitExceededError } from '../rate-limits/rate-limits.errors.js';
import { constantTimeEquals, TriggerFiringService, WEBHOOK_WINDOW_SECONDS } from '../triggers/trigger-firing.service.js';
import { ChannelAccountsService } from './channel-accounts.service.js';
import { ChannelAccountNotFoundError, ChannelPayloadError, ChannelSignatureError, ChannelVerificationError } from './channels.errors.js';
import type { ChannelAccount } from './entities/channel-account.entity.js';
import type { InboundMessageEvent, InboundStatusEvent, ProviderConnector } from './providers/provider-connector.js';
import { connectorFor } from './providers/provider-connectors.js';
import { deliveryEventData } from './channels.sql.js';

/** A stored payload (one not done at once: a status for a message whose provider id is not recorded yet, a fault) is tried again this many times, for about ten hours. */
export const PAYLOAD_ATTEMPTS = 20;
/** Before the sweep first tries a stored payload again. */
const FIRST_RETRY_AFTER_SECONDS = 2;

export interface ChannelWebhookRequest {
  rawBody: Buffer | undefined;
  headers: Record<string, string | string[] | undefined>;
  ip: string | undefined;
}

/** What processing a payload did: `retry` when something in it must be tried again later. */
export type PayloadOutcome = 'done' | 'retry';

/**
 * A status of a sent message moves it forward only (queued < sending < sent < delivered < read; failed
 * ends it), once: a repeated or late callback changes nothing. Each change emits its event in the
 * same statement. A status whose provider id no account message has yet (the sender has not recorded
 * it) is counted as unmatched, and its payload is tried again later.
 */
const APPLY_STATUSES = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($2::jsonb) AS s(provider_message_id varchar, status varchar, at timestamptz, error_code varchar, error_title text)
  ), target AS (
    SELECT s.*, m.id AS message_id, m.execution_id, m.channel, c.external_id AS customer_ref
      FROM input s
      JOIN message_provider_ids p ON p.channel_account_id = $1 AND p.provider_message_id = s.provider_message_id
      JOIN messages m ON m.id = p.message_id
      JOIN customers c ON c.id = m.customer_id
  ), updated AS (
    UPDATE message_deliveries d
       SET status = t.status,
           delivered_at = CASE WHEN t.status IN ('delivered', 'read') THEN COALESCE(d.delivered_at, t.at) ELSE d.delivered_at END,
           read_at = CASE WHEN t.status = 'read' THEN t.at ELSE d.read_at END,
           failed_at = CASE WHEN t.status = 'failed' THEN t.at ELSE d.failed_at END,
           error_code = CASE WHEN t.status = 'failed' THEN t.error_code ELSE d.error_code END,
           error_title = CASE WHEN t.status = 'failed' THEN t.error_title ELSE d.error_title END,
           updated_at = now()
      FROM target t
     WHERE d.message_id = t.message_id
       AND array_position(ARRAY['queued', 'sending', 'sent', 'delivered', 'read', 'failed'], t.status)
         > array_position(ARRAY['queued', 'sending', 'sent', 'delivered', 'read', 'failed'], d.status)
    RETURNING d.organization_id, d.channel_account_id, t.*
  ), events AS (
    ${insertOutboxEvents(`
    SELECT organization_id, 'message.' || status,
           ${deliveryEventData({
             messageId: 'message_id', customerRef: 'customer_ref', channel: 'channel', accountId: 'channel_account_id', providerMessageId: 'provider_message_id',
             executionId: 'execution_id', status: 'status', at: 'at',
             error: `CASE WHEN status = 'failed' THEN jsonb_build_object('code', error_code, 'title', error_title) END`,
           })}
      FROM updated WHERE status IN ('delivered', 'read', 'failed')`)}
  )
  SELECT (SELECT count(*) FROM input)::int - (SELECT count(*) FROM target)::int AS unmatched`;

const STATUS_RANK: Record<InboundStatusEvent['status'], number> = { sent: 2, delivered: 3, read: 4, failed: 5 };

/**
 * Provider webhooks in: Meta's verification handshake; payloads checked against the account's app
 * secret on their raw bytes (X-Hub-Signature-256) before anything is parsed or stored, then applied
 * before the answer: customers' messages through the conversation path of POST /v1/messages (resume,
 * else triggers), statuses of sent messages forward only. The 200 says the payload is durable: applied
 * (its effects committed), or stored for the worker's sweep (processDue) when part of it could not be
 * applied (a status ahead of its send, a fault). A crash before the answer leaves Meta to deliver it
 * again. Applying is idempotent: the provider's message id is unique per account.
 */
@Injectable()
export class ChannelInboundService {
  private readonly logger = new Logger(ChannelInboundService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: ChannelAccountsService,
    private readonly firing: TriggerFiringService,
    private readonly rateLimiter: RateLimiter,
    private readonly config: AppConfig,
  ) {}

  /** GET …/webhook: Meta's subscription check. Returns the challenge to echo. */
  async verify(accountId: string, query: Record<string, unknown>): Promise<string> {
    const account = await this.metaAccount(accountId);
    const token = this.accounts.verifyTokenOf(account) ?? '';
    const given = typeof query['hub.verify_token'] === 'string' ? query['hub.verify_token'] : null;
    const challenge = query['hub.challenge'];
    // The token compared whatever the mode, so the time taken says nothing about it.
    const matches = constantTimeEquals(given, token);
    if (query['hub.mode'] !== 'subscribe' || !matches || typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 1024) {
      throw new ChannelVerificationError();
    }
    return challenge;
  }

  /** POST …/webhook: verified, limited, then applied, or stored to be applied by the sweep; durable once this returns. */
  async receive(accountId: string, request: ChannelWebhookRequest): Promise<{ rateLimit: RateLimitResult | null }> {
    const account = await this.metaAccount(accountId);
    const credentials = this.accounts.credentialsOf(account);
    const limited = this.config.rateLimitsEnabled;
    if (!metaSignatureMatches(credentials.app_secret ?? '', request.rawBody ?? Buffer.alloc(0), request.headers['x-hub-signature-256'])) {
      const failures = limited && (await this.rateLimiter.hit('hook-failures', request.ip ?? 'unknown', this.config.webhookSignatureFailuresPerMinute, WEBHOOK_WINDOW_SECONDS));
      if (failures && !failures.allowed) throw new RateLimitExceededError(failures);
      throw new ChannelSignatureError();
    }
    const rateLimit = limited ? await this.rateLimiter.hit('channel', account.id, this.config.channels.webhookPerMinute, WEBHOOK_WINDOW_SECONDS) : null;
    if (rateLimit && !rateLimit.allowed) throw new RateLimitExceededError(rateLimit);

    let body: unknown;
    try {
      body = JSON.parse((request.rawBody ?? Buffer.alloc(0)).toString('utf8'));
    } catch {
      throw new ChannelPayloadError();
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ChannelPayloadError();

    let outcome: PayloadOutcome;
    try {
      const connector = connectorFor(account.provider);
      outcome = connector ? await this.apply(account, connector, body) : 'done';
    } catch (error) {
      // Deleted through another process since this one read it (accounts are reused for ACCOUNT_CACHE_MS).
      if (error instanceof ChannelAccountNotFoundError || isForeignKeyViolation(error)) throw new ChannelAccountNotFoundError();
      this.logger.warn(`A ${account.provider} payload for account ${account.id} is stored to be applied again: ${(error as Error).message}`);
      outcome = 'retry';
    }
    if (outcome === 'retry') await this.store(account, body);
    return { rateLimit };
  }

  /** Keeps a payload not applied entirely for the sweep; a failure here is the request's (Meta delivers it again). */
  private async store(account: ChannelAccount, body: unknown): Promise<void> {
    try {
      await this.dataSource.query(
        `INSERT INTO channel_webhook_payloads (id, channel_account_id, organization_id, body, next_attempt_at)
         VALUES ($1, $2, $3, $4::jsonb, now() + make_interval(secs => $5))`,
        [uuidv7(), account.id, account.organizationId, JSON.stringify(body), FIRST_RETRY_AFTER_SECONDS],
      );
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new ChannelAccountNotFoundError();
      throw error;
    }
  }

  /** Applies the stored payload; deletes it when done (or out of attempts). */
  async process(payloadId: string): Promise<PayloadOutcome> {
    const [row] = (await this.dataSource.query(`SELECT channel_account_id, body, attempts FROM channel_webhook_payloads WHERE id = $1`, [payloadId])) as {
      channel_account_id: string;
      body: unknown;
      attempts: number;
    }[];
    if (!row) return 'done';
    const account = await this.accounts.findById(row.channel_account_id);
    const connector = account ? connectorFor(account.provider) : undefined;
    let outcome: PayloadOutcome = 'done';
    if (account && connector) outcome = await this.apply(account, connector, row.body);
    // The sweep counted this attempt when it claimed the payload.
    if (outcome === 'done' || row.attempts >= PAYLOAD_ATTEMPTS) {
      if (outcome === 'retry') this.logger.warn(`Payload ${payloadId}: statuses for messages never recorded as sent, given up after ${PAYLOAD_ATTEMPTS} attempts`);
      await this.dataSource.query(`DELETE FROM channel_webhook_payloads WHERE id = $1`, [payloadId]);
      return 'done';
    }
    return 'retry';
  }

  /**
   * The sweep: payloads whose time has come (not applied at once, or to try again), claimed by moving
   * their next attempt on (2^attempts seconds, at most an hour) so that two workers never take the same.
   */
  async processDue(limit = 50): Promise<number> {
    const due = (await this.dataSource.query(
      `UPDATE channel_webhook_payloads p
          SET attempts = p.attempts + 1, next_attempt_at = now() + make_interval(secs => least(3600, power(2, p.attempts + 1)))
        WHERE p.id IN (SELECT id FROM channel_webhook_payloads WHERE next_attempt_at <= now() ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING p.id`,
      [limit],
    )) as [{ id: string }[], number];
    const ids = due[0].map((r) => r.id);
    for (const id of ids) {
      try {
        await this.process(id);
      } catch (error) {
        this.logger.warn(`Payload ${id} will be applied again later: ${(error as Error).message}`);
      }
    }
    return ids.length;
  }

  private async apply(account: ChannelAccount, connector: ProviderConnector, body: unknown): Promise<PayloadOutcome> {
    const events = connector.parse(body, this.accounts.credentialsOf(account));
    const messages = events.filter((e): e is InboundMessageEvent => e.kind === 'message');
    const statuses = events.filter((e): e is InboundStatusEvent => e.kind === 'status');
    await this.applyMessages(account, messages);
    const unmatched = await this.applyStatuses(account, statuses);
    return unmatched > 0 ? 'retry' : 'done';
  }

  /**
   * Customers in parallel; each customer's messages in payload order, one after the other. A message
   * already stored for the account (a redelivery) is recognised by the statement that would store it.
   */
  private async applyMessages(account: ChannelAccount, messages: InboundMessageEvent[]): Promise<void> {
    if (messages.length === 0) return;
    const seen = new Set<string>();
    const byCustomer = new Map<string, InboundMessageEvent[]>();
    for (const message of messages) {
      if (seen.has(message.providerMessageId)) continue;
      seen.add(message.providerMessageId);
      byCustomer.set(message.from, [...(byCustomer.get(message.from) ?? []), message]);
    }
    await Promise.all(
      [...byCustomer.values()].map(async (conversation) => {
        for (const message of conversation) {
          await this.firing.receiveMessage(
            account.organizationId,
            {
              channel: account.channel,
              customerRef: message.from,
              content: message.text ?? '',
              metadata: {
                type: message.type,
                provider_timestamp: isoTime(message.timestamp),
                ...(message.profileName ? { profile_name: message.profileName } : {}),
                ...(message.details ? { details: message.details } : {}),
              },
              channelAccountId: account.id,
              providerMessageId: message.providerMessageId,
              type: message.type,
              routable: message.text !== null && message.text.trim() !== '',
            },
            `${account.provider} webhook`,
          );
        }
      }),
    );
  }

  private async applyStatuses(account: ChannelAccount, statuses: InboundStatusEvent[]): Promise<number> {
    if (statuses.length === 0) return 0;
    // One row per message (an UPDATE changes a row once per statement): the furthest status it reached.
    const furthest = new Map<string, InboundStatusEvent>();
    for (const status of statuses) {
      const seen = furthest.get(status.providerMessageId);
      if (!seen || STATUS_RANK[status.status] > STATUS_RANK[seen.status]) furthest.set(status.providerMessageId, status);
    }
    const input = [...furthest.values()].map((s) => ({
      provider_message_id: s.providerMessageId,
      status: s.status,
      at: isoTime(s.timestamp),
      error_code: s.error?.code ?? null,
      error_title: s.error?.title ?? null,
    }));
    const [{ unmatched }] = (await this.dataSource.query(APPLY_STATUSES, [account.id, JSON.stringify(input)])) as { unmatched: number }[];
    return unmatched;
  }

  /** The account behind a Meta webhook URL, else 404 (deleted, never existed, or not a Meta provider). */
  private async metaAccount(accountId: string): Promise<ChannelAccount> {
    const account = await this.accounts.findById(accountId);
    if (!account || !this.accounts.definitionOf(account).meta) throw new ChannelAccountNotFoundError();
    return account;
  }
}

/** X-Hub-Signature-256: `sha256=` and the hex HMAC-SHA256 of the raw body with the app secret, compared in constant time. */
export function metaSignatureMatches(appSecret: string, rawBody: Buffer, header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  const match = value ? /^sha256=([0-9a-fA-F]{64})$/.exec(value.trim()) : null;
  if (!match || appSecret === '') return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1] as string, 'hex'));
}
