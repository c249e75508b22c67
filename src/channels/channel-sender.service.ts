import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job, Queue } from 'bull';
import { Counter } from 'prom-client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import { CHANNEL_SENDS_QUEUE, ChannelSendJobs, SEND_ATTEMPTS, SEND_JOB_OPTIONS, sendBackoffMs, type SendJob } from '../executions/channels/channel-sends.queue.js';
import { metricsRegistry } from '../metrics/metrics.middleware.js';
import { RateLimiter } from '../rate-limits/rate-limiter.js';
import { ChannelAccountsService } from './channel-accounts.service.js';
import { ChannelErrorCodes } from './channels.errors.js';
import { ProviderSendError, type OutboundContent } from './providers/provider-connector.js';
import { connectorFor } from './providers/provider-connectors.js';
import { contextFromTraceparent, inSpan, SpanKind, tracingEnabled } from '../common/tracing/trace-context.js';
import { deliveryEventData } from './channels.sql.js';
import { countProviderSend } from './channels.metrics.js';
import { SqlStatement } from '../database/sql-statement.js';
import { Batcher } from '../common/batcher.js';
import { isUuid } from '../common/ids/uuid.js';

/**
 * Sends resumed after an attempt that may have reached the provider: the worker died (or its lease ran
 * out) between sending and recording the provider's answer. Each may have reached the customer twice.
 */
export const resumedSends = new Counter({
  name: 'channel_sends_resumed_total',
  help: 'Sends attempted again after an attempt that may have reached the provider (possible duplicates)',
  registers: [metricsRegistry],
});

/** How long a claimed send stays its worker's before another may take it over (the send timeout plus a margin). */
function leaseSeconds(config: AppConfig): number {
  return Math.ceil(config.channels.sendTimeoutMs / 1000) + 5;
}

/**
 * Claims the sends of the messages `targets` (a relation of `message_id`, and `after_id` when `settled`) that head their
 * customer's conversation on their account (no earlier message of that customer and account still queued or being
 * sent, but `after_id`: a send the same statement settles), and are queued, or being sent by an attempt whose lease
 * ran out (`lease`: seconds). Each is locked by a probe by key, in the order of `targets` (sorted by id: two
 * statements lock the rows they share in the same order). CTEs `current` and `claimed`; `claimed` returns what
 * sending needs.
 */
function claimCtes(targets: string, lease: string, settled: boolean): string {
  return `current AS (
    SELECT d.*${settled ? ', t.after_id' : ''} FROM (${targets}) t
     CROSS JOIN LATERAL (SELECT * FROM message_deliveries WHERE message_id = t.message_id LIMIT 1 FOR UPDATE) d
  ), claimed AS (
    UPDATE message_deliveries d
       SET status = 'sending', sending_since = now(), attempts = d.attempts + 1, updated_at = now()
      FROM current c
     WHERE d.message_id = ANY (ARRAY[c.message_id])
       AND (c.status = 'queued' OR (c.status = 'sending' AND c.sending_since < now() - make_interval(secs => ${lease})))
       AND NOT EXISTS (
         SELECT 1 FROM message_deliveries p
          WHERE p.channel_account_id = c.channel_account_id AND p.customer_id = c.customer_id AND p.status IN ('queued', 'sending')
            AND (p.queued_at, p.message_id) < (c.queued_at, c.message_id)${settled ? ' AND p.message_id <> c.after_id' : ''}
         OFFSET 0)
    RETURNING d.message_id, c.status AS previous, d.attempts, d.kind, d.channel_account_id, d.customer_id${settled ? ', c.after_id' : ''}
  )`;
}

/** The columns of a claim (see claimCtes), for the statements that return one. */
const CLAIM_COLUMNS = `k.message_id, k.previous, k.attempts, k.kind, k.channel_account_id, k.customer_id, m.content, m.metadata, cu.external_id AS customer_ref`;

/**
 * Joins the claim `k` to its message `m` and customer `cu`: a lateral probe of each by primary key (the LIMIT keeps
 * the planner from flattening it into a join). The statements are named, so their plan is made once per connection;
 * as plain joins, a plan made while the tables were small (a new database, before autovacuum's first analyze) read
 * the month's messages and every customer whole at each call, more of them every second (1.3 ms of a claim after a
 * minute of the bench), and would again after a month's partition is created. `join`: `CROSS` (a claim) or `LEFT`
 * (none: the columns are null).
 */
function claimJoins(join: 'CROSS' | 'LEFT'): string {
  const on = join === 'LEFT' ? ' ON true' : '';
  return `${join} JOIN LATERAL (SELECT content, metadata FROM messages WHERE id = k.message_id LIMIT 1) m${on}
    ${join} JOIN LATERAL (SELECT external_id FROM customers WHERE id = k.customer_id LIMIT 1) cu${on}`;
}

/**
 * The sender's statements are named, so each connection plans them once. A message's id is compared as
 * `(SELECT $1::uuid)`, or comes in a JSON array: a value the planner cannot see, so that it does not prune the
 * months' partitions while planning. With the value in sight, every plan made for a call was cheaper than the
 * generic one, and PostgreSQL planned each statement anew at every call (3.4 ms for an acceptance, more than
 * running it); the generic plan prunes the partitions as it starts.
 */
const MESSAGE = '(SELECT $1::uuid)';

/**
 * Claims the sends of the messages of the JSON array $1 (ids, sorted: see claimCtes) that can be ($2: the lease, in
 * seconds). Concurrent claims of a process share it (the sender's Batcher); a batch never holds one id twice.
 */
const CLAIM = new SqlStatement<Claim>(
  `
  WITH ${claimCtes(`SELECT m::uuid AS message_id FROM jsonb_array_elements_text($1::jsonb) AS m`, '$2', false)}
  SELECT ${CLAIM_COLUMNS} FROM claimed k ${claimJoins('CROSS')}`,
  { prepareAs: 'channels.claim' },
);

/**
 * What a statement that settles messages (its CTE `settled`: message_id, channel_account_id, customer_id, claim_next)
 * returns: for each, the customer's next pending message on the account in conversation order (`next_id`, after
 * `after_id`: the settled one), and, when its `claim_next` holds, that message claimed in the same statement
 * (CLAIM_COLUMNS, null when it could not be: another attempt holds it).
 */
function thenClaimNext(lease: string): string {
  return `, next AS (
    SELECT s.message_id AS after_id, n.message_id, s.claim_next FROM settled s
     CROSS JOIN LATERAL (
       SELECT p.message_id FROM message_deliveries p
        WHERE p.channel_account_id = s.channel_account_id AND p.customer_id = s.customer_id AND p.status IN ('queued', 'sending') AND p.message_id <> s.message_id
        ORDER BY p.queued_at, p.message_id LIMIT 1) n
  ), ${claimCtes(`SELECT message_id, after_id FROM next WHERE claim_next ORDER BY message_id`, lease, true)}
  SELECT n.after_id, n.message_id AS next_id, ${CLAIM_COLUMNS}
    FROM next n LEFT JOIN claimed k ON k.message_id = n.message_id ${claimJoins('LEFT')}`;
}

/**
 * The provider accepted the sends of the JSON array $1 (`message_id`, `provider_message_id`, `claim_next`; one per
 * conversation, sorted by id): each recorded on its message whatever happened meanwhile; a send itself becomes
 * `sent` only if it is still this attempt's (`sending`: not failed by its account's deletion). Goes on with each
 * conversation's next message ($2: lease; claimed when `claim_next`). Concurrent acceptances share it (Batcher).
 */
const ACCEPTED = new SqlStatement<NextRow>(
  `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(message_id uuid, provider_message_id varchar, claim_next boolean)
  ), accepted AS (
    -- Each send locked by a probe by key, in the input's order, and its status read as it is now. Checked in the
    -- update instead, the status let the planner read every queued and sending row of the pending index.
    SELECT d.message_id, d.status, i.claim_next FROM input i
     CROSS JOIN LATERAL (SELECT message_id, status FROM message_deliveries WHERE message_id = i.message_id LIMIT 1 FOR UPDATE) d
  ), settled AS (
    UPDATE message_deliveries d SET status = 'sent', sent_at = now(), sending_since = NULL, next_attempt_at = NULL, error_code = NULL, error_title = NULL,
           updated_at = now()
      FROM accepted a
     WHERE d.message_id = ANY (ARRAY[a.message_id]) AND a.status = 'sending'
    RETURNING d.message_id, d.channel_account_id, d.customer_id, a.claim_next
  ), provider_id AS (
    UPDATE messages m SET provider_message_id = i.provider_message_id
      FROM input i
     WHERE m.id = ANY (ARRAY[i.message_id])
    RETURNING m.id, m.channel_account_id, i.provider_message_id
  ), provider_key AS (
    -- How the statuses find the message (message_provider_ids: the messages are partitioned by month).
    INSERT INTO message_provider_ids (channel_account_id, provider_message_id, message_id)
    SELECT channel_account_id, provider_message_id, id FROM provider_id WHERE channel_account_id IS NOT NULL
    ON CONFLICT DO NOTHING
  )
  ${thenClaimNext('$2')}`,
  { prepareAs: 'channels.accepted' },
);

/** The send failed for good ($2, $3: the code and title); goes on with the conversation's next message ($4: lease, $5: claim it). */
const FAILED = new SqlStatement<NextRow>(
  `
  WITH settled AS (
    UPDATE message_deliveries SET status = 'failed', failed_at = now(), sending_since = NULL, next_attempt_at = NULL,
           error_code = $2, error_title = $3, updated_at = now()
     WHERE message_id = ${MESSAGE} AND status IN ('queued', 'sending')
    RETURNING message_id, organization_id, channel_account_id, customer_id, execution_id, failed_at, $5::boolean AS claim_next
  ), events AS (
    ${insertOutboxEvents(`
    SELECT s.organization_id, 'message.failed',
           ${deliveryEventData({
             messageId: 's.message_id', customerRef: 'c.external_id', channel: 'm.channel', accountId: 's.channel_account_id', providerMessageId: 'NULL',
             executionId: 's.execution_id', status: `'failed'`, at: 's.failed_at', error: `jsonb_build_object('code', $2::text, 'title', $3::text)`,
           })}
      FROM settled s
      CROSS JOIN LATERAL (SELECT channel FROM messages WHERE id = s.message_id LIMIT 1) m
      CROSS JOIN LATERAL (SELECT external_id FROM customers WHERE id = s.customer_id LIMIT 1) c`)}
  )
  ${thenClaimNext('$4')}`,
  { prepareAs: 'channels.failed' },
);

const RETRY_LATER = new SqlStatement(
  `
  UPDATE message_deliveries SET status = 'queued', sending_since = NULL, next_attempt_at = now() + make_interval(secs => $2 / 1000.0),
         error_code = $3, error_title = $4, updated_at = now()
   WHERE message_id = ${MESSAGE} AND status = 'sending'`,
  { prepareAs: 'channels.retry-later' },
);

const RENEW_LEASE = new SqlStatement(`UPDATE message_deliveries SET sending_since = now() WHERE message_id = ${MESSAGE} AND status = 'sending'`, {
  prepareAs: 'channels.renew-lease',
});

/** Heads of conversations left without a live job: queued and untouched for a while, or claimed by an attempt whose lease ran out. */
const STALLED_HEADS = `
  SELECT message_id FROM (
    SELECT DISTINCT ON (channel_account_id, customer_id) message_id, status, sending_since, next_attempt_at, updated_at
      FROM message_deliveries WHERE status IN ('queued', 'sending')
     ORDER BY channel_account_id, customer_id, queued_at, message_id
  ) head
   WHERE (status = 'queued' AND COALESCE(next_attempt_at, updated_at) < now() - interval '5 seconds')
      OR (status = 'sending' AND sending_since < now() - make_interval(secs => $1))
   LIMIT 500`;

type SendOutcome = 'sent' | 'failed' | 'skipped';

/** A claimed send: what sending it needs, and the status it was claimed from. */
interface Claim {
  message_id: string;
  previous: string;
  attempts: number;
  kind: string;
  channel_account_id: string;
  customer_id: string;
  content: string;
  metadata: { template?: { name: string; language: string; components?: unknown[] } };
  customer_ref: string;
}

/** A row of a settle (thenClaimNext): the next message, and its claim's columns (null when not claimed). */
type NextRow = { after_id: string; next_id: string } & { [K in keyof Claim]: Claim[K] | null };

/** The conversation's next message after a settled send, with its claim when the settle made one. */
interface Next {
  id: string;
  claim?: Claim;
}

function nextOf(row: NextRow | undefined): Next | undefined {
  if (!row) return undefined;
  return { id: row.next_id, claim: row.message_id === null ? undefined : (row as Claim) };
}

/** An acceptance to record (ACCEPTED): the send, the provider's id for it, whether to claim the conversation's next message. */
interface Acceptance {
  claim: Claim;
  providerMessageId: string;
  claimNext: boolean;
}

/** Ids sort as PostgreSQL compares uuids (lower-case hex), so that every batch locks shared rows in one order. */
const byMessageId = <T>(id: (item: T) => string) => (a: T, b: T) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);

/**
 * Send slots of an account reserved from Redis at once: a twentieth of the per-second rate, 1 to 50. The
 * slots a process holds when the window ends are lost to it, and only when it sends below the rate.
 */
function sendReservation(rate: number): number {
  return Math.max(1, Math.min(50, Math.floor(rate / 20)));
}
/** Accounts whose reserved slots a process keeps (cleared past it). */
const BUDGETS_LIMIT = 1_000;
/** Reserved slots are not used in the last ms of their window. */
const RESERVATION_MARGIN_MS = 5;

/** Messages of one conversation one job sends in a row before handing the rest to a job of their own. */
const DRAIN_LIMIT = 20;

/**
 * Delivers outbound messages to their provider through Bull jobs of CHANNEL_SENDS_QUEUE (one per run, for
 * its first message; retries and the sweep add their own). A
 * customer's messages on an account leave one at a time in conversation order, whichever worker holds
 * which job: a send is claimed only by the head of its conversation (CLAIM), and each settled send
 * goes on with the next one. Retries: 429, 5xx and network faults go back to `queued` with a delayed
 * job after the provider's Retry-After or an exponential backoff; any other refusal fails the message
 * with the provider's code, as does the last of SEND_ATTEMPTS. Sends per account are limited across workers
 * (CHANNEL_SEND_RATE per second, counted in Redis).
 */
@Injectable()
export class ChannelSender {
  private readonly logger = new Logger(ChannelSender.name);
  /** Per account: send slots reserved from the shared budget and not used yet, and until when they may be. */
  private readonly budgets = new Map<string, { left: number; until: number }>();
  /**
   * Claims and acceptances of concurrent sends share statements, one in flight of each: the claims a run commit
   * dispatches go out together (gathered over one turn of the event loop: the dispatcher starts them in one), the
   * acceptances that arrive while one is in flight together in the next. A batch never holds one message twice, nor
   * two acceptances of one conversation; its rows are sorted by id, so that two statements lock what they share in
   * one order. A failed batch is tried again item by item (a deadlock between two workers' batches fails one).
   * Under the bench's load this took the sender from 1.7 statements per conversation to 1.0.
   */
  private readonly claims = new Batcher<string, Claim | undefined>((ids) => this.claimMany(ids), { keys: (id) => [id], gather: 'one-turn' });
  private readonly acceptances = new Batcher<Acceptance, NextRow | undefined>((items) => this.acceptMany(items), {
    keys: ({ claim }) => [`${claim.channel_account_id}/${claim.customer_id}`],
  });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectQueue(CHANNEL_SENDS_QUEUE) private readonly queue: Queue,
    private readonly accounts: ChannelAccountsService,
    private readonly rateLimiter: RateLimiter,
    private readonly config: AppConfig,
  ) {}

  /**
   * Sends the job's message, then goes on in the same job with its customer's next one on the account
   * (up to DRAIN_LIMIT; beyond, the next gets a job of its own). A retryable refusal puts the message
   * back to queued and adds a delayed job for it (the provider's Retry-After, else the backoff); the
   * attempts are counted on the message, so a retry is the same whichever job makes it.
   */
  async send(job: Job<SendJob>): Promise<SendOutcome> {
    if (!tracingEnabled()) return this.drain(job.data.messageId);
    // Traces on: the job's span is a child of the run that queued it (the job's traceparent).
    return inSpan('channel.send_job', { 'message.id': job.data.messageId }, () => this.drain(job.data.messageId), {
      kind: SpanKind.CONSUMER,
      parent: contextFromTraceparent(job.data.traceparent),
    });
  }

  /**
   * The same, started in this process by the run that committed the message (ChannelSendDispatcher).
   * A fault is left to the sweep: the message stays queued, or its claim's lease runs out.
   */
  async sendConversation(messageId: string): Promise<void> {
    try {
      await this.drain(messageId);
    } catch (error) {
      this.logger.warn(`Message ${messageId}: the send is left to the sweep (${(error as Error).message})`);
    }
  }

  /**
   * Sends `first`, then its conversation's next messages, each claimed by the statement that settles the
   * one before (up to DRAIN_LIMIT; the next after that gets a job of its own).
   */
  private async drain(first: string): Promise<SendOutcome> {
    // Not an id (a malformed job): nothing to send, and it must not fail the statement it would share.
    if (!isUuid(first)) return 'skipped';
    const claim = await this.claims.submit(first.toLowerCase());
    if (!claim) return 'skipped';
    let step = await this.sendClaimed(claim, DRAIN_LIMIT > 1);
    const outcome = step.outcome;
    for (let sent = 1; step.next; sent += 1) {
      if (!step.next.claim) {
        // Not claimed by the settle: held by another attempt (whose settle goes on), or left at the drain's limit.
        if (sent >= DRAIN_LIMIT) await this.queueNext([{ message_id: step.next.id }], first);
        break;
      }
      step = await this.sendClaimed(step.next.claim, sent + 1 < DRAIN_LIMIT);
    }
    return outcome;
  }

  /**
   * One claimed send, settled; the conversation's next message when one waits (claimed by the settle
   * when `claimNext` and no other attempt holds it).
   */
  private async sendClaimed(claim: Claim, claimNext: boolean): Promise<{ outcome: SendOutcome; next?: Next }> {
    const messageId = claim.message_id;
    if (claim.previous === 'sending') {
      resumedSends.inc();
      this.logger.warn(`Message ${messageId}: sending again after an attempt that may have reached the provider (a possible duplicate)`);
    }

    const account = await this.accounts.findById(claim.channel_account_id);
    const connector = account ? connectorFor(account.provider) : undefined;
    if (!account || !connector) return { outcome: 'failed', next: await this.fail(messageId, ChannelErrorCodes.accountDeleted, 'The channel account was deleted', claimNext) };
    // kind `agent`: a person's message (POST /v1/customers/{id}/messages), text sent as a human agent's.
    const content: OutboundContent =
      claim.kind === 'template' && claim.metadata.template
        ? { kind: 'template', template: claim.metadata.template }
        : { kind: 'text', text: claim.content, ...(claim.kind === 'agent' ? { humanAgent: true } : {}) };
    try {
      // A wait for the account's send budget renews the lease, so that it never runs out before the send.
      if (await this.throttle(account.id)) await RENEW_LEASE.run(this.dataSource, [messageId]);
      const request = {
        baseUrl: this.config.channels.apiUrls[account.provider as keyof AppConfig['channels']['apiUrls']],
        credentials: this.accounts.credentialsOf(account),
        to: claim.customer_ref,
        content,
        timeoutMs: this.config.channels.sendTimeoutMs,
      };
      // Traces on: a span per provider call, with the provider and the outcome (never the token, the recipient or the content).
      const { providerMessageId } = !tracingEnabled()
        ? await connector.send(request)
        : await inSpan(
            'channel.send',
            { 'channel.provider': account.provider, 'channel.account_id': account.id, 'message.id': messageId, 'message.kind': content.kind, 'send.attempt': claim.attempts },
            async (span) => {
              try {
                const sent = await connector.send(request);
                span?.setAttribute('channel.outcome', 'sent');
                return sent;
              } catch (error) {
                span?.setAttributes({
                  'channel.outcome': error instanceof ProviderSendError ? (error.retryable ? 'retryable' : 'refused') : 'error',
                  ...(error instanceof ProviderSendError && error.details.code ? { 'channel.error_code': String(error.details.code) } : {}),
                });
                throw error;
              }
            },
            { kind: SpanKind.CLIENT },
          );
      countProviderSend(account.provider);
      return { outcome: 'sent', next: nextOf(await this.acceptances.submit({ claim, providerMessageId, claimNext })) };
    } catch (error) {
      if (!(error instanceof ProviderSendError)) throw error;
      countProviderSend(account.provider, error);
      const { code, title, retryAfterMs } = error.details;
      if (error.retryable && claim.attempts < SEND_ATTEMPTS) {
        const delay = sendBackoffMs(claim.attempts, retryAfterMs);
        // Recorded, so that the sweep leaves the message to its delayed job meanwhile.
        await RETRY_LATER.run(this.dataSource, [messageId, delay, code ?? null, title ?? error.message]);
        await this.queue.add(ChannelSendJobs.send, { messageId } satisfies SendJob, { ...SEND_JOB_OPTIONS, delay, jobId: `send:${messageId}:retry:${claim.attempts}` });
        this.logger.log(`Message ${messageId}: ${error.message}; trying again in ${delay} ms`);
        return { outcome: 'skipped' };
      }
      return { outcome: 'failed', next: await this.fail(messageId, code ?? ChannelErrorCodes.sendFailed, title ?? error.message, claimNext) };
    }
  }

  private async claimMany(ids: string[]): Promise<(Claim | undefined)[]> {
    const rows = await CLAIM.run(this.dataSource, [JSON.stringify([...ids].sort()), leaseSeconds(this.config)]);
    const byId = new Map(rows.map((r) => [r.message_id, r]));
    return ids.map((id) => byId.get(id));
  }

  private async acceptMany(items: Acceptance[]): Promise<(NextRow | undefined)[]> {
    const input = items
      .map(({ claim, providerMessageId, claimNext }) => ({ message_id: claim.message_id, provider_message_id: providerMessageId, claim_next: claimNext }))
      .sort(byMessageId((i) => i.message_id));
    const rows = await ACCEPTED.run(this.dataSource, [JSON.stringify(input), leaseSeconds(this.config)]);
    const byId = new Map(rows.map((r) => [r.after_id, r]));
    return items.map((i) => byId.get(i.claim.message_id));
  }

  /** The sweep: queue again the conversation heads whose job was lost. Returns how many. */
  async requeueStalled(): Promise<number> {
    const rows = (await this.dataSource.query(STALLED_HEADS, [leaseSeconds(this.config)])) as { message_id: string }[];
    if (rows.length === 0) return 0;
    // One job per message per 10 s however many workers sweep.
    const slot = Math.floor(Date.now() / 10_000);
    await this.queue.addBulk(
      rows.map((r) => ({ name: ChannelSendJobs.send, data: { messageId: r.message_id } satisfies SendJob, opts: { ...SEND_JOB_OPTIONS, jobId: `send:${r.message_id}:sweep:${slot}` } })),
    );
    return rows.length;
  }

  /** Fails the message for good; returns the conversation's next message, if one waits (claimed when `claimNext`, if it could be). */
  private async fail(messageId: string, code: string, title: string, claimNext: boolean): Promise<Next | undefined> {
    const [row] = await FAILED.run(this.dataSource, [messageId, code, title, leaseSeconds(this.config), claimNext]);
    this.logger.warn(`Message ${messageId} failed: ${code} ${title}`);
    return nextOf(row);
  }

  /** The conversation's next message, queued under an id of its own (its first job may still be finishing). */
  private async queueNext(next: { message_id: string }[], after: string): Promise<void> {
    if (next.length === 0) return;
    await this.queue.addBulk(
      next.map((n) => ({ name: ChannelSendJobs.send, data: { messageId: n.message_id } satisfies SendJob, opts: { ...SEND_JOB_OPTIONS, jobId: `send:${n.message_id}:after:${after}` } })),
    );
  }

  /**
   * Waits for a slot of the account's per-second send budget (CHANNEL_SEND_RATE, shared by every worker
   * through Redis); true when it had to wait. Slots are reserved from Redis a few at a time (sendReservation)
   * and counted out here until the window they were reserved in ends, so most sends need no round trip.
   */
  private async throttle(accountId: string): Promise<boolean> {
    const rate = this.config.channels.sendRate;
    for (let waited = false; ; waited = true) {
      const held = this.budgets.get(accountId);
      if (held && held.left > 0 && Date.now() < held.until) {
        held.left -= 1;
        return waited;
      }
      const reserved = await this.rateLimiter.reserve('channel-send', accountId, rate, 1, sendReservation(rate));
      // Redis unreachable: sent, as every rate limit fails open.
      if (!reserved) return waited;
      if (reserved.granted > 0) {
        if (this.budgets.size >= BUDGETS_LIMIT) this.budgets.clear();
        // Used only within the window they were counted in (less a margin for the answer's way back).
        this.budgets.set(accountId, { left: reserved.granted - 1, until: Date.now() + reserved.windowMs - RESERVATION_MARGIN_MS });
        return waited;
      }
      await sleep(Math.max(5, Math.min(1000, reserved.windowMs)));
    }
  }
}
