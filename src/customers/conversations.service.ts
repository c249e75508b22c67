import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Batcher } from '../common/batcher.js';
import { SqlStatement } from '../database/sql-statement.js';
import { uuidv7 } from '../common/ids/uuid-v7.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import { activeMessageTriggersOf } from '../triggers/triggers.sql.js';
import { channelAccountExists } from '../channels/channels.sql.js';
import { ChannelAccountNotFoundError } from '../channels/channels.errors.js';

export interface InboundMessage {
  organizationId: string;
  channel: string;
  customerRef: string;
  content: string;
  language?: string | null;
  metadata?: Record<string, unknown>;
  /** The channel account it came through: it resumes only that account's executions. */
  channelAccountId?: string | null;
  /** The provider's id of the message: a second message with the same id on the account is not stored. */
  providerMessageId?: string | null;
  /** The provider's message type (text, image, …), recorded in the event when given. */
  type?: string;
  /** False for a message without text (media, location…): recorded and emitted, never resumes or matches. Default true. */
  routable?: boolean;
  /** Bursts: > 0 holds a routable message for its burst's turn (see BURSTS below). Default 0: handled at once. */
  burstWindowMs?: number;
  /** Bursts: the caller's user agent, recorded with a burst it opens for the turn's firing. */
  userAgent?: string | null;
}

/** An active message trigger of the organization, as keyword matching and firing need it. */
export interface ActiveMessageTrigger {
  id: string;
  organizationId: string;
  workflowId: string;
  status: 'active';
  channel: string | null;
  configuration: Record<string, unknown>;
}

export interface ReceivedMessage {
  messageId: string;
  /** False when the account already had a message with this provider id (nothing was stored or emitted). */
  stored: boolean;
  /** The customer's row (created on first contact). */
  customerId: string;
  /** The running execution this message was kept for, if the customer had one on this channel. */
  resumed: { executionId: string; triggerId: string | null; triggerExecutionId: string | null } | null;
  /**
   * When nothing was resumed: the organization's active message triggers, oldest first, read in
   * the statement that stored the message (same snapshot, no extra round trip). Empty otherwise.
   */
  messageTriggers: ActiveMessageTrigger[];
  /** Handoff: a person has this customer's conversation; the message was stored and emitted, and resumes and starts nothing. */
  handedOff: boolean;
  /** Bursts: the burst the message was held for (it resumed and matched nothing yet); null when handled at once. */
  held: HeldMessage | null;
}

/** Bursts: where a held message went. */
export interface HeldMessage {
  burstId: string;
  /** The burst's deadline: its turn is taken then. */
  heldUntil: Date;
  /** True for the burst's first message, whose caller schedules the turn. */
  opened: boolean;
}

/**
 * Inbound messages as one statement (an implicit transaction, one round trip) — concurrent
 * requests share it (see Batcher): for each, the customer upserted (customer.created on first
 * contact, last_seen_at moved on), their running execution on the channel claimed (waiting for a
 * reply or not yet: see `claimed`), the message stored (routed to that execution) and
 * message.received recorded. A customer whose conversation a person has taken over (an active
 * handoff, read from the upserted row) gets nothing claimed and no triggers. A message that resumes nothing
 * also gets its organization's active message triggers (read once per organization in the batch),
 * for the caller to match its keywords against: reading them in a statement of their own cost
 * each request a round trip, about a tenth of the machine's CPU per execution. A batch never
 * holds two messages of one customer (one INSERT cannot update a row twice, and they must stay
 * in order).
 */
interface ReceiveRow {
  message_id: string;
  customer_id: string;
  execution_id: string | null;
  trigger_id: string | null;
  trigger_execution_id: string | null;
  message_triggers: ActiveMessageTrigger[] | null;
  stored: boolean;
  handed_off: boolean;
  // Bursts variant only:
  burst_id?: string | null;
  held_until?: Date | null;
  burst_opened?: boolean | null;
}

/**
 * --- Bursts (a channel account's settings.burst_window_ms, CONVERSATION_BURST_WINDOW_MS) ---
 * The statement comes in two variants built from one text: without bursts (every message of the
 * batch has window 0, the usual case) it is exactly the statement above; with them (`bursts`), a
 * routable message whose window is > 0 is *held*: it resumes nothing and reads no triggers here;
 * instead it joins its customer's open burst on the channel and account (message_bursts, at most one
 * open per key: the upsert on the partial unique index) or opens one whose deadline is now + window,
 * and is stored with its `burst_id`. The upsert locks the burst row until the statement commits, so a
 * worker closing the burst (BURST_CLAIM) waits for it and then sees the message: a message is never
 * in a burst already taken, and never lost between two (it opens the next one). Messages with window
 * 0 in the same batch are handled as without bursts. The fragments are marked `bursts:` below.
 */
export function receiveStatement(bursts: boolean): SqlStatement<ReceiveRow> {
  // A message without a window in a batch with bursts has no burst_window_ms (null): not held.
  const held = (row: string) => (bursts ? ` AND NOT (${row}.routable AND COALESCE(${row}.burst_window_ms, 0) > 0)` : '');
  return new SqlStatement<ReceiveRow>(
  `
  WITH inbound AS (
    -- A message through a channel account deleted since the caller read it (accounts are cached per
    -- process for a moment) is left out: no row comes back for it, and nothing of it is stored.
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(
      message_id uuid, organization_id uuid, customer_ref varchar, channel varchar, language varchar, content text, metadata jsonb,
      customer_event jsonb, message_event jsonb, channel_account_id uuid, provider_message_id varchar, routable boolean${
        /* bursts: */ bursts ? ', burst_window_ms int, burst_id uuid, user_agent text' : ''})
     WHERE ${channelAccountExists('i.channel_account_id')}
  ), customer AS (
    INSERT INTO customers (organization_id, external_id, channel, language, first_seen_at, last_seen_at)
    SELECT organization_id, customer_ref, channel, language, now(), now() FROM inbound
    ON CONFLICT (organization_id, external_id) DO UPDATE
      SET last_seen_at = now(),
          channel = COALESCE(EXCLUDED.channel, customers.channel),
          language = COALESCE(EXCLUDED.language, customers.language),
          updated_at = now()
    RETURNING id, organization_id, external_id, (xmax = 0) AS inserted,
              -- Handoff: a person has the conversation (HandoffService); the message resumes and starts nothing.
              (handoff_ends_at > now()) IS TRUE AS handed_off
  ), candidate AS (
    SELECT i.*, c.id AS customer_id, c.inserted, c.handed_off, w.id AS running_id
      FROM inbound i
      JOIN customer c ON c.organization_id = i.organization_id AND c.external_id = i.customer_ref
      LEFT JOIN LATERAL (
        SELECT e.id FROM workflow_executions e
         WHERE i.routable AND NOT c.handed_off${held('i')} AND e.customer_id = c.id AND e.channel = i.channel AND e.status = 'running'
           AND (i.channel_account_id IS NULL OR e.channel_account_id = i.channel_account_id)
         ORDER BY e.started_at DESC LIMIT 1
      ) w ON true
  ), running AS (
    -- The reply is kept for the customer's running execution on the channel, waiting or not yet
    -- waiting. The probe locks that execution, by key and in id order, waiting for a transition in
    -- flight, and reads its status as that transition left it (an expiry or a finish committed
    -- first: the reply is matched against triggers instead). The status is checked here rather than
    -- in the update, where it let the planner read the index of every running execution instead of
    -- the one row.
    SELECT e.id, e.status FROM (SELECT DISTINCT running_id FROM candidate WHERE running_id IS NOT NULL ORDER BY running_id) c
     CROSS JOIN LATERAL (SELECT id, status FROM workflow_executions WHERE id = c.running_id LIMIT 1 FOR NO KEY UPDATE) e
  ), claimed AS (
    -- It moves the execution's version, so that a run or an expiry that read the execution before
    -- this reply does not commit but decides again, seeing it (RunsRepository).
    UPDATE workflow_executions e SET updated_at = now()
      FROM running r
     WHERE e.id = ANY (ARRAY[r.id]) AND r.status = 'running'
    RETURNING e.id, e.trigger_id, e.trigger_execution_id
  ), routed AS (
    SELECT c.*, k.id AS execution_id, k.trigger_id, k.trigger_execution_id
      FROM candidate c LEFT JOIN claimed k ON k.id = c.running_id
  ),${
    /* bursts: */ bursts
      ? ` burst AS (
    -- bursts: a held message opens its customer's burst on the channel and account, or joins the open one
    -- (the no-op update locks it until this commits). A batch holds one message per customer.
    INSERT INTO message_bursts AS b (id, organization_id, customer_id, channel, channel_account_id, user_agent, deadline)
    SELECT burst_id, organization_id, customer_id, channel, channel_account_id, user_agent, now() + make_interval(secs => burst_window_ms / 1000.0)
      FROM routed WHERE routable AND burst_window_ms > 0 AND NOT handed_off
    ON CONFLICT (organization_id, customer_id, channel, (COALESCE(channel_account_id, '00000000-0000-0000-0000-000000000000'::uuid))) WHERE closed_at IS NULL
    DO UPDATE SET deadline = b.deadline
    RETURNING b.id, b.customer_id, b.deadline, (b.xmax = 0) AS opened
  ),`
      : ''
  } provider_id AS (
    -- A provider's message id already stored for the account (a redelivery racing this one): the message is
    -- not stored. The messages are partitioned by month, so the check is its own table (MessagesPartitioned).
    INSERT INTO message_provider_ids (channel_account_id, provider_message_id, message_id)
    SELECT channel_account_id, provider_message_id, message_id FROM routed WHERE channel_account_id IS NOT NULL AND provider_message_id IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING message_id
  ), message AS (
    INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, language, metadata, execution_id, channel_account_id, provider_message_id${bursts ? ', burst_id' : ''})
    SELECT message_id, organization_id, customer_id, channel, 'inbound', content, language, metadata, execution_id, channel_account_id, provider_message_id${
      /* bursts: */ bursts ? ', (SELECT b.id FROM burst b WHERE b.customer_id = routed.customer_id)' : ''} FROM routed
     WHERE channel_account_id IS NULL OR provider_message_id IS NULL OR message_id IN (SELECT message_id FROM provider_id)
    ON CONFLICT DO NOTHING
    RETURNING id
  ), events AS (
    ${insertOutboxEvents(`
    SELECT organization_id, 'customer.created', customer_event FROM routed WHERE inserted
    UNION ALL
    SELECT r.organization_id, 'message.received', r.message_event || jsonb_build_object('execution_id', r.execution_id) FROM routed r JOIN message m ON m.id = r.message_id`)}
  ), message_triggers AS (
    -- Per organization by its partial index (a lateral lookup: a plan joining the JSON input,
    -- counted as 100 rows, could prefer a scan and stay cached with the named statement).
    SELECT o.organization_id, t.triggers
      FROM (SELECT DISTINCT organization_id FROM routed WHERE execution_id IS NULL AND routable AND NOT handed_off${held('routed')}) o
      CROSS JOIN LATERAL (${activeMessageTriggersOf('o.organization_id')}) t
  )
  SELECT r.message_id, r.customer_id, r.execution_id, r.trigger_id, r.trigger_execution_id, mt.triggers AS message_triggers, m.id IS NOT NULL AS stored, r.handed_off${
    /* bursts: */ bursts ? ', b.id AS burst_id, b.deadline AS held_until, b.opened AS burst_opened' : ''}
    FROM routed r
    LEFT JOIN message m ON m.id = r.message_id
    LEFT JOIN message_triggers mt ON r.execution_id IS NULL AND r.routable AND NOT r.handed_off${held('r')} AND mt.organization_id = r.organization_id${
    /* bursts: */ bursts ? '\n    LEFT JOIN burst b ON b.customer_id = r.customer_id' : ''}`,
  { prepareAs: bursts ? 'conversations.receive-bursts' : 'conversations.receive' },
  );
}

const RECEIVE = receiveStatement(false);
/** Bursts: for a batch holding at least one message with a window. */
const RECEIVE_BURSTS = receiveStatement(true);

/** Bursts: a burst claimed for its turn. */
export interface ClaimedBurst {
  id: string;
  organizationId: string;
  customerId: string;
  customerRef: string;
  channel: string;
  channelAccountId: string | null;
  userAgent: string | null;
  startedAt: Date;
  /** 1 for the first claim; more when the burst is claimed again after a worker failed midway. */
  claims: number;
  /** Handoff: a person took the conversation over since the burst opened; its turn starts nothing. */
  handedOff: boolean;
}

interface ClaimedBurstRow {
  id: string;
  organization_id: string;
  customer_id: string;
  customer_ref: string;
  channel: string;
  channel_account_id: string | null;
  user_agent: string | null;
  started_at: Date;
  claims: number;
  handed_off: boolean;
}

/** An inbound message as the receive statement reads it. */
interface Inbound {
  message_id: string;
  organization_id: string;
  customer_ref: string;
  channel: string;
  language: string | null;
  content: string;
  metadata: Record<string, unknown>;
  customer_event: Record<string, unknown>;
  message_event: Record<string, unknown>;
  channel_account_id: string | null;
  provider_message_id: string | null;
  routable: boolean;
  // Bursts: present only for a message with a window (> 0).
  burst_window_ms?: number;
  burst_id?: string;
  user_agent?: string | null;
}

/** Customers and their inbound messages: first contact, keeping replies for running executions. */
@Injectable()
export class ConversationsService {
  private readonly receives = new Batcher<Inbound, ReceivedMessage | null>(
    (messages) => this.receiveMany(messages),
    { keys: (m) => [`${m.organization_id}:${m.customer_ref}`] },
  );

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Stores an inbound message (creating the customer on first contact) and, when the customer
   * has a running execution on this channel (waiting for a reply or not yet), routes the message
   * to it — atomically, in one
   * statement: POST /v1/messages is the hot path, and each round trip costs it latency. A message
   * through a channel account deleted meanwhile is refused (ChannelAccountNotFoundError), nothing stored.
   */
  async receive(inbound: InboundMessage): Promise<ReceivedMessage> {
    const messageId = uuidv7();
    const language = inbound.language ?? null;
    const received = await this.receives.submit({
      message_id: messageId,
      organization_id: inbound.organizationId,
      customer_ref: inbound.customerRef,
      channel: inbound.channel,
      language,
      content: inbound.content,
      metadata: inbound.metadata ?? {},
      customer_event: { customer_id: inbound.customerRef, channel: inbound.channel },
      message_event: {
        message_id: messageId,
        customer_id: inbound.customerRef,
        channel: inbound.channel,
        content: inbound.content,
        language,
        // execution_id: added by the statement, which knows whether the customer is waiting
        ...(inbound.channelAccountId ? { channel_account_id: inbound.channelAccountId } : {}),
        ...(inbound.providerMessageId ? { provider_message_id: inbound.providerMessageId } : {}),
        ...(inbound.type ? { type: inbound.type } : {}),
      },
      channel_account_id: inbound.channelAccountId ?? null,
      provider_message_id: inbound.providerMessageId ?? null,
      routable: inbound.routable ?? true,
      // Bursts: only a message with a window carries these (and makes its batch take RECEIVE_BURSTS).
      ...(inbound.burstWindowMs ? { burst_window_ms: inbound.burstWindowMs, burst_id: uuidv7(), user_agent: inbound.userAgent ?? null } : {}),
    });
    if (!received) throw new ChannelAccountNotFoundError();
    return received;
  }

  // --- Bursts: the worker's side of a burst's turn (TriggerFiringService.takeTurn) ---

  /**
   * Claims a burst for its turn: sets `closed_at` (a new message now opens the next burst) and counts
   * the claim. Conditional, so two workers never both have it; a burst closed more than `leaseMs`
   * ago and still there (its worker died or failed before finishing) can be claimed again. The
   * update waits for an inbound statement joining the burst to commit: the held messages read after
   * this returns are all of them.
   */
  async claimBurst(burstId: string, leaseMs: number): Promise<ClaimedBurst | null> {
    const [rows] = (await this.dataSource.query(
      `UPDATE message_bursts b SET closed_at = now(), claims = b.claims + 1
         FROM customers c
        WHERE b.id = $1 AND c.id = b.customer_id AND (b.closed_at IS NULL OR b.closed_at < now() - make_interval(secs => $2::double precision / 1000))
        RETURNING b.id, b.organization_id, b.customer_id, c.external_id AS customer_ref, b.channel, b.channel_account_id, b.user_agent, b.started_at, b.claims,
                  (c.handoff_ends_at > now()) IS TRUE AS handed_off`,
      [burstId, leaseMs],
    )) as [ClaimedBurstRow[], number];
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      organizationId: row.organization_id,
      customerId: row.customer_id,
      customerRef: row.customer_ref,
      channel: row.channel,
      channelAccountId: row.channel_account_id,
      userAgent: row.user_agent,
      startedAt: row.started_at,
      claims: row.claims,
      handedOff: row.handed_off,
    };
  }

  /** A claimed burst's messages in arrival order (each with its own content). */
  async heldMessages(burst: ClaimedBurst): Promise<{ id: string; content: string; language: string | null; executionId: string | null; turnContent: string | null }[]> {
    const rows = (await this.dataSource.query(
      `SELECT id, content, language, execution_id, turn_content FROM messages
        WHERE burst_id = $1 AND organization_id = $2 ORDER BY created_at, id`,
      [burst.id, burst.organizationId],
    )) as { id: string; content: string; language: string | null; execution_id: string | null; turn_content: string | null }[];
    return rows.map((r) => ({ id: r.id, content: r.content, language: r.language, executionId: r.execution_id, turnContent: r.turn_content }));
  }

  /**
   * Routes a burst's turn to the customer's running execution on the channel (and account), as
   * the receive statement routes one message: the burst's messages get its `execution_id`; the first
   * keeps its content and gets the joined text as `turn_content` (what the run reads as its one
   * reply), the others are marked consumed (absorbed by the first). Null when the customer has no
   * running execution there. Messages already routed are left as they are (a claim again).
   */
  async routeTurn(burst: ClaimedBurst, firstMessageId: string, joined: string): Promise<ReceivedMessage['resumed']> {
    const rows = (await this.dataSource.query(
      `WITH running AS (
         SELECT e.id FROM workflow_executions e
          WHERE e.customer_id = $2 AND e.channel = $3 AND e.status = 'running' AND ($4::uuid IS NULL OR e.channel_account_id = $4::uuid)
          ORDER BY e.started_at DESC LIMIT 1
       ), claimed AS (
         UPDATE workflow_executions e SET updated_at = now() FROM running r WHERE e.id = r.id AND e.status = 'running'
         RETURNING e.id, e.trigger_id, e.trigger_execution_id
       ), routed AS (
         UPDATE messages m
            SET execution_id = k.id,
                turn_content = CASE WHEN m.id = $5::uuid THEN $6 END,
                consumed_at = CASE WHEN m.id = $5::uuid THEN NULL ELSE now() END
           FROM claimed k
          WHERE m.burst_id = $1 AND m.organization_id = $7 AND m.execution_id IS NULL
         RETURNING m.id
       )
       SELECT k.id, k.trigger_id, k.trigger_execution_id, (SELECT count(*) FROM routed)::int AS routed FROM claimed k`,
      [burst.id, burst.customerId, burst.channel, burst.channelAccountId, firstMessageId, joined, burst.organizationId],
    )) as { id: string; trigger_id: string | null; trigger_execution_id: string | null }[];
    const row = rows[0];
    return row ? { executionId: row.id, triggerId: row.trigger_id, triggerExecutionId: row.trigger_execution_id } : null;
  }

  /**
   * For a burst claimed again (its first worker died or failed midway): whether its turn started an
   * execution already: one of the customer's, since the burst began, started with the joined text.
   */
  async turnStarted(burst: ClaimedBurst, joined: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM workflow_executions
        WHERE organization_id = $1 AND customer_id = $2 AND created_at >= $3 AND input->>'message' = $4 LIMIT 1`,
      [burst.organizationId, burst.customerId, burst.startedAt, joined],
    );
    return rows.length > 0;
  }

  /** The organization's active message triggers, as the receive statement reads them. */
  async activeMessageTriggers(organizationId: string): Promise<ActiveMessageTrigger[]> {
    const [row] = (await this.dataSource.query(activeMessageTriggersOf('$1::uuid'), [organizationId])) as { triggers: ActiveMessageTrigger[] | null }[];
    return row?.triggers ?? [];
  }

  /** A burst whose turn is done. */
  async finishBurst(burstId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM message_bursts WHERE id = $1`, [burstId]);
  }

  /**
   * For the sweep: bursts left open `graceMs` past their deadline (their job was lost: Redis flushed,
   * a failed add) and bursts claimed more than `leaseMs` ago and not finished.
   */
  async dueBursts(graceMs: number, leaseMs: number, limit = 100): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM message_bursts
        WHERE (closed_at IS NULL AND deadline < now() - make_interval(secs => $1::double precision / 1000))
           OR closed_at < now() - make_interval(secs => $2::double precision / 1000)
        ORDER BY deadline LIMIT $3`,
      [graceMs, leaseMs, limit],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** Null for a message whose channel account is gone. */
  private async receiveMany(messages: Inbound[]): Promise<(ReceivedMessage | null)[]> {
    const statement = messages.some((m) => m.burst_window_ms) ? RECEIVE_BURSTS : RECEIVE;
    const rows = await statement.run(this.dataSource, [JSON.stringify(messages)]);
    const byId = new Map(rows.map((r) => [r.message_id, r]));
    return messages.map((m) => {
      const row = byId.get(m.message_id);
      if (!row && m.channel_account_id !== null) return null;
      if (!row) throw new Error(`Inbound message ${m.message_id} was not stored`);
      return {
        messageId: m.message_id,
        stored: row.stored,
        customerId: row.customer_id,
        resumed: row.execution_id ? { executionId: row.execution_id, triggerId: row.trigger_id, triggerExecutionId: row.trigger_execution_id } : null,
        messageTriggers: row.message_triggers ?? [],
        handedOff: row.handed_off,
        held: row.burst_id ? { burstId: row.burst_id, heldUntil: new Date(row.held_until!), opened: row.burst_opened === true } : null,
      };
    });
  }
}
