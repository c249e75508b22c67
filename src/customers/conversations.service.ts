import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Batcher } from '../common/batcher.js';
import { SqlStatement } from '../database/sql-statement.js';
import { uuidv7 } from '../common/ids/uuid-v7.js';
import { INSERT_OUTBOX_EVENTS } from '../events/outbox.sql.js';
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
const RECEIVE = new SqlStatement<{
  message_id: string;
  customer_id: string;
  execution_id: string | null;
  trigger_id: string | null;
  trigger_execution_id: string | null;
  message_triggers: ActiveMessageTrigger[] | null;
  stored: boolean;
  handed_off: boolean;
}>(
  `
  WITH inbound AS (
    -- A message through a channel account deleted since the caller read it (accounts are cached per
    -- process for a moment) is left out: no row comes back for it, and nothing of it is stored.
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(
      message_id uuid, organization_id uuid, customer_ref varchar, channel varchar, language varchar, content text, metadata jsonb,
      customer_event jsonb, message_event jsonb, channel_account_id uuid, provider_message_id varchar, routable boolean)
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
         WHERE i.routable AND NOT c.handed_off AND e.customer_id = c.id AND e.channel = i.channel AND e.status = 'running'
           AND (i.channel_account_id IS NULL OR e.channel_account_id = i.channel_account_id)
         ORDER BY e.started_at DESC LIMIT 1
      ) w ON true
  ), claimed AS (
    -- The reply is kept for the customer's running execution on the channel, waiting or not yet
    -- waiting. The update waits for a transition of that execution in flight and re-checks that it
    -- still runs (an expiry or a finish committed first: the reply is matched against triggers
    -- instead); and it moves the execution's version, so that a run or an expiry that read the
    -- execution before this reply does not commit but decides again, seeing it (RunsRepository).
    UPDATE workflow_executions e SET updated_at = now()
      FROM candidate c
     WHERE e.id = c.running_id AND e.status = 'running'
    RETURNING e.id, e.trigger_id, e.trigger_execution_id
  ), routed AS (
    SELECT c.*, k.id AS execution_id, k.trigger_id, k.trigger_execution_id
      FROM candidate c LEFT JOIN claimed k ON k.id = c.running_id
  ), message AS (
    -- A provider's message id already stored for the account (a redelivery racing this one): nothing.
    INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, language, metadata, execution_id, channel_account_id, provider_message_id)
    SELECT message_id, organization_id, customer_id, channel, 'inbound', content, language, metadata, execution_id, channel_account_id, provider_message_id FROM routed
    ON CONFLICT DO NOTHING
    RETURNING id
  ), events AS (
    ${INSERT_OUTBOX_EVENTS}
    SELECT organization_id, 'customer.created', customer_event FROM routed WHERE inserted
    UNION ALL
    SELECT r.organization_id, 'message.received', r.message_event || jsonb_build_object('execution_id', r.execution_id) FROM routed r JOIN message m ON m.id = r.message_id
  ), message_triggers AS (
    -- Per organization by its partial index (a lateral lookup: a plan joining the JSON input,
    -- counted as 100 rows, could prefer a scan and stay cached with the named statement).
    SELECT o.organization_id, t.triggers
      FROM (SELECT DISTINCT organization_id FROM routed WHERE execution_id IS NULL AND routable AND NOT handed_off) o
      CROSS JOIN LATERAL (${activeMessageTriggersOf('o.organization_id')}) t
  )
  SELECT r.message_id, r.customer_id, r.execution_id, r.trigger_id, r.trigger_execution_id, mt.triggers AS message_triggers, m.id IS NOT NULL AS stored,
         r.handed_off
    FROM routed r
    LEFT JOIN message m ON m.id = r.message_id
    LEFT JOIN message_triggers mt ON r.execution_id IS NULL AND r.routable AND NOT r.handed_off AND mt.organization_id = r.organization_id`,
  { prepareAs: 'conversations.receive' },
);

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
    });
    if (!received) throw new ChannelAccountNotFoundError();
    return received;
  }

  /** Null for a message whose channel account is gone. */
  private async receiveMany(messages: Inbound[]): Promise<(ReceivedMessage | null)[]> {
    const rows = await RECEIVE.run(this.dataSource, [JSON.stringify(messages)]);
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
      };
    });
  }
}
