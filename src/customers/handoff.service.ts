import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ChannelAccountsService } from '../channels/channel-accounts.service.js';
import { queueDeliveries, REPLY_WINDOW } from '../channels/channels.sql.js';
import { uuidv7 } from '../common/ids/uuid-v7.js';
import { isoTimeSql } from '../common/iso-time.js';
import { AppConfig } from '../config/app-config.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import { ChannelSendDispatcher } from '../executions/channels/channel-send.dispatcher.js';
import { ExecutionEngine } from '../executions/execution-engine.service.js';
import { ChannelAccountCannotSendError, ChannelWindowClosedError, CustomerNotFoundError, NoChannelAccountError } from './customers.errors.js';
import { CustomersService } from './customers.service.js';

const HOUR_MS = 3_600_000;

/**
 * How long after the customer's last message on an account a person may still write to them, per
 * provider: WhatsApp's customer service window (24 h); Instagram's HUMAN_AGENT tag (7 days), which the
 * sender puts on every agent message. A provider not listed sends nothing (a phone line).
 */
export const AGENT_WINDOWS_MS: Readonly<Record<string, number>> = {
  whatsapp_cloud: 24 * HOUR_MS,
  instagram: 7 * 24 * HOUR_MS,
};

/** The data of conversation.handoff_ended (webhooks/event-schemas.ts) over a row alias `r` holding the ended handoff. */
function handoffEndedData(r: string, endedBy: string): string {
  return `jsonb_build_object('customer_id', ${r}.external_id, 'reason', ${r}.handoff_reason, 'started_at', ${isoTimeSql(`${r}.handoff_started_at`)}, 'ended_by', ${endedBy})`;
}

/**
 * Starts a handoff, or extends the active one ($1 organization, $2 customer's external id, $3 reason,
 * $4 whether a reason was given (else an active handoff keeps its own), $5 HANDOFF_TIMEOUT in ms):
 * ends_at moves to now + the timeout; started_at and the event conversation.handoff_started only when
 * none was active. A handoff that expired but was not swept yet is ended here (its
 * conversation.handoff_ended, ended_by timeout), so each handoff's end is emitted once. No row: no such customer.
 */
const START = `
  WITH target AS (
    SELECT id, organization_id, external_id, handoff_reason, handoff_started_at, handoff_ends_at, (handoff_ends_at > now()) IS TRUE AS active
      FROM customers WHERE organization_id = $1 AND external_id = $2
       FOR UPDATE
  ), started AS (
    UPDATE customers c
       SET handoff_reason = CASE WHEN t.active AND NOT $4::boolean THEN c.handoff_reason ELSE $3::varchar END,
           handoff_started_at = CASE WHEN t.active THEN c.handoff_started_at ELSE now() END,
           handoff_ends_at = now() + make_interval(secs => $5::double precision / 1000),
           updated_at = now()
      FROM target t WHERE c.id = t.id
    RETURNING c.organization_id, c.external_id, c.handoff_reason, c.handoff_started_at, c.handoff_ends_at
  ), events AS (
    ${insertOutboxEvents(`
    SELECT t.organization_id, 'conversation.handoff_ended', ${handoffEndedData('t', `'timeout'`)}
      FROM target t WHERE NOT t.active AND t.handoff_ends_at IS NOT NULL
    UNION ALL
    SELECT s.organization_id, 'conversation.handoff_started',
           jsonb_build_object('customer_id', s.external_id, 'reason', s.handoff_reason, 'started_at', ${isoTimeSql('s.handoff_started_at')},
                              'ends_at', ${isoTimeSql('s.handoff_ends_at')})
      FROM started s CROSS JOIN target t WHERE NOT t.active`)}
  )
  SELECT t.id, NOT t.active AS started FROM target t`;

/**
 * Ends the customer's handoff ($1 organization, $2 external id) with conversation.handoff_ended
 * (ended_by request; timeout for one that had expired and was not swept yet). No row: no such customer;
 * `ended` false: there was none.
 */
const END = `
  WITH target AS (
    SELECT id, organization_id, external_id, handoff_reason, handoff_started_at, handoff_ends_at, (handoff_ends_at > now()) IS TRUE AS active
      FROM customers WHERE organization_id = $1 AND external_id = $2
       FOR UPDATE
  ), cleared AS (
    UPDATE customers c SET handoff_reason = NULL, handoff_started_at = NULL, handoff_ends_at = NULL, updated_at = now()
      FROM target t WHERE c.id = t.id AND t.handoff_ends_at IS NOT NULL
    RETURNING c.id
  ), events AS (
    ${insertOutboxEvents(`
    SELECT t.organization_id, 'conversation.handoff_ended', ${handoffEndedData('t', `CASE WHEN t.active THEN 'request' ELSE 'timeout' END`)}
      FROM target t JOIN cleared c ON c.id = t.id`)}
  )
  SELECT t.id, t.active AS ended FROM target t`;

/**
 * The sweep: handoffs whose time ran out, cleared with their conversation.handoff_ended (ended_by
 * timeout), by the partial index on handoff_ends_at. Rows another sweep or request holds are skipped,
 * and one that a request ended or extended meanwhile no longer matches: each end is emitted once.
 */
const SWEEP = `
  WITH due AS (
    SELECT id, organization_id, external_id, handoff_reason, handoff_started_at
      FROM customers WHERE handoff_ends_at <= now()
     ORDER BY handoff_ends_at LIMIT 500
       FOR UPDATE SKIP LOCKED
  ), cleared AS (
    UPDATE customers c SET handoff_reason = NULL, handoff_started_at = NULL, handoff_ends_at = NULL, updated_at = now()
      FROM due d WHERE c.id = d.id
    RETURNING c.id
  ), events AS (
    ${insertOutboxEvents(`
    SELECT d.organization_id, 'conversation.handoff_ended', ${handoffEndedData('d', `'timeout'`)}
      FROM due d JOIN cleared c ON c.id = d.id`)}
  )
  SELECT count(*)::int AS n FROM cleared`;

/** The account the customer last wrote from: their newest inbound message through one ($1 customer row id). */
const LAST_ACCOUNT = `
  SELECT channel_account_id FROM messages
   WHERE customer_id = $1 AND direction = 'inbound' AND channel_account_id IS NOT NULL
   ORDER BY created_at DESC, id DESC LIMIT 1`;

/**
 * A person's message, stored as outbound with author `agent`, queued for the sender like a run's
 * ($1 id, $2 organization, $3 customer row, $4 channel, $5 content, $6 account, $7 customer's external id),
 * with message.sent. Its created_at (and its place in the customer's queue on the account) is the
 * clock at the statement, after whatever the workflow queued before.
 */
const SEND = `
  WITH clock AS MATERIALIZED (
    SELECT clock_timestamp() AS at
  ), sent AS (
    INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, author, channel_account_id, created_at)
    SELECT $1::uuid, $2::uuid, $3::uuid, $4::varchar, 'outbound', $5::text, 'agent', $6::uuid, at FROM clock
    RETURNING id, organization_id, customer_id, channel, channel_account_id, created_at
  ), deliveries AS (
    ${queueDeliveries(`SELECT id AS message_id, organization_id, channel_account_id, customer_id, NULL::uuid AS execution_id, NULL::uuid AS workflow_id,
                              channel, created_at AS started_at, 'agent' AS kind, created_at AS queued_at FROM sent`)}
  ), events AS (
    ${insertOutboxEvents(`
    SELECT organization_id, 'message.sent',
           jsonb_build_object('message_id', id, 'customer_id', $7::text, 'channel', channel, 'content', $5::text, 'execution_id', NULL,
                              'node_id', NULL, 'channel_account_id', channel_account_id, 'author', 'agent')
      FROM sent`)}
  )
  SELECT id, channel, channel_account_id, created_at FROM sent`;

export interface AgentMessage {
  id: string;
  channel: string;
  channelAccountId: string;
  content: string;
  createdAt: Date;
}

/**
 * A person takes a customer's conversation over (a handoff): while it is active, the customer's inbound
 * messages are recorded and emitted but resume and start nothing (the inbound statement reads the
 * handoff from the customer row it upserts: ConversationsService), and their running executions end as
 * EXECUTION_HANDED_OFF (ExecutionEngine.handOff). It ends by DELETE, or by itself HANDOFF_TIMEOUT after
 * it started or was last extended; every read compares ends_at with now(), and the workers' sweep emits
 * the end of expired ones. Agents write to the customer through their channel account.
 */
@Injectable()
export class HandoffService {
  private readonly logger = new Logger(HandoffService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly customers: CustomersService,
    private readonly engine: ExecutionEngine,
    private readonly accounts: ChannelAccountsService,
    private readonly sends: ChannelSendDispatcher,
  ) {}

  /**
   * Starts the customer's handoff (or extends the active one, keeping its reason unless one is given)
   * and ends their running executions. 404 CUSTOMER_NOT_FOUND for another organization's or unknown customer.
   */
  async start(organizationId: string, customerRef: string, reason: string | null | undefined): Promise<void> {
    const customer = await this.customers.getCustomer(organizationId, customerRef);
    // An empty reason is none.
    const given = reason === undefined ? null : reason || null;
    const [row] = (await this.dataSource.query(START, [organizationId, customer.externalId, given, reason !== undefined, this.config.handoffTimeoutMs])) as {
      id: string;
      started: boolean;
    }[];
    if (!row) throw new CustomerNotFoundError();
    // Also when extending: an execution fired by a message that raced the start is ended by the next call.
    const ended = await this.engine.handOff(organizationId, row.id);
    if (ended.length > 0) this.logger.log(`Customer ${row.id}: handed off, ${ended.length} execution(s) ended`);
  }

  /** Ends the customer's handoff; nothing to end is not an error (the answer is the same). */
  async end(organizationId: string, customerRef: string): Promise<void> {
    const customer = await this.customers.getCustomer(organizationId, customerRef);
    const [row] = (await this.dataSource.query(END, [organizationId, customer.externalId])) as { id: string; ended: boolean }[];
    if (!row) throw new CustomerNotFoundError();
  }

  /** Clears expired handoffs with their conversation.handoff_ended; returns how many. */
  async sweep(): Promise<number> {
    const [row] = (await this.dataSource.query(SWEEP)) as { n: number }[];
    return row?.n ?? 0;
  }

  /**
   * A person's message to the customer through a channel account (`channelAccountId`, else the one they
   * last wrote from), inside the provider's window since their last message on it (AGENT_WINDOWS_MS;
   * else CHANNEL_WINDOW_CLOSED and nothing is queued). Starts (or extends) the handoff first, so the
   * workflow's executions end before the message is queued, behind whatever they had queued.
   */
  async sendAgentMessage(organizationId: string, customerRef: string, input: { content: string; channelAccountId?: string }): Promise<AgentMessage> {
    const customer = await this.customers.getCustomer(organizationId, customerRef);
    let accountId = input.channelAccountId;
    if (accountId === undefined) {
      const [last] = (await this.dataSource.query(LAST_ACCOUNT, [customer.id])) as { channel_account_id: string }[];
      if (!last) throw new NoChannelAccountError();
      accountId = last.channel_account_id;
    }
    const account = await this.accounts.getOwned(organizationId, accountId);
    const windowMs = AGENT_WINDOWS_MS[account.provider];
    if (windowMs === undefined) throw new ChannelAccountCannotSendError(account.provider);
    const [window] = await REPLY_WINDOW.run(this.dataSource, [account.id, customer.id]);
    const last = window?.last_inbound_at ?? null;
    if (last === null || Date.now() - last.getTime() >= windowMs) {
      throw new ChannelWindowClosedError(
        last === null
          ? 'The customer has never written through this channel account'
          : `The customer last wrote through this account more than ${windowMs / HOUR_MS} hours ago`,
      );
    }

    await this.start(organizationId, customerRef, undefined);
    const id = uuidv7();
    const [sent] = (await this.dataSource.query(SEND, [id, organizationId, customer.id, account.channel, input.content, account.id, customer.externalId])) as {
      id: string;
      channel: string;
      channel_account_id: string;
      created_at: Date;
    }[];
    await this.sends.dispatch([sent.id]);
    return { id: sent.id, channel: sent.channel, channelAccountId: sent.channel_account_id, content: input.content, createdAt: sent.created_at };
  }
}
