/**
 * SQL fragments of the channels module's tables for the execution engine's statements (docs/ARCHITECTURE.md,
 * "Table ownership"): the engine's run commit queues the sends of the messages it stores, and a run
 * that sends through an account reads the account's reply window. Owned here, so that these tables'
 * columns are named in this module only.
 */
import { SqlStatement } from '../database/sql-statement.js';

/**
 * Queues a send for each row of `source`: (message_id, organization_id, channel_account_id, customer_id,
 * execution_id, workflow_id, channel, started_at, kind, queued_at), queued_at being the message's own
 * created_at (the conversation's order) and started_at its execution's start (the hour its delivery
 * figures count in).
 */
export function queueDeliveries(source: string): string {
  return `INSERT INTO message_deliveries (message_id, organization_id, channel_account_id, customer_id, execution_id, workflow_id, channel, started_at, kind, queued_at)
    SELECT message_id, organization_id, channel_account_id, customer_id, execution_id, workflow_id, channel, started_at, kind, queued_at FROM (${source}) d`;
}

/**
 * The account's provider and when the customer last wrote to it (`account`, `customer`: SQL expressions of
 * the account's id and the customer's row id), as `provider` and `last_inbound_at`: no row when the account
 * is gone. By the account's primary key and the customer's messages index, newest first. It ends with its
 * WHERE clause, so that a caller may add conditions (the run's load: only for a running execution).
 */
export function replyWindowOf(account: string, customer: string): string {
  return `SELECT a.provider,
         (SELECT m.created_at FROM messages m
           WHERE m.customer_id = ${customer} AND m.channel_account_id = a.id AND m.direction = 'inbound'
           ORDER BY m.created_at DESC LIMIT 1) AS last_inbound_at
    FROM channel_accounts a WHERE a.id = ${account}`;
}

/** replyWindowOf for account $1 and customer $2 (a person's message; a run reads it with its execution). */
export const REPLY_WINDOW = new SqlStatement<{ provider: string; last_inbound_at: Date | null }>(replyWindowOf('$1', '$2'), {
  prepareAs: 'channels.reply-window',
});

/**
 * Whether the account `column` names exists (true for NULL, no account): false once it is deleted. A probe
 * of the primary key per row: OFFSET 0 keeps the planner from turning the EXISTS into a hashed subplan, which
 * reads every account into a hash and which a cached plan made while the table looked small would keep.
 */
export function channelAccountExists(column: string): string {
  return `(${column} IS NULL OR EXISTS (SELECT 1 FROM channel_accounts a WHERE a.id = ${column} OFFSET 0))`;
}

/** The send state of messages ($1: message ids), for the steps that sent them. */
export const DELIVERY_STATES_SQL = `
  SELECT d.message_id, d.status, d.error_code, d.error_title, m.provider_message_id
    FROM message_deliveries d JOIN messages m ON m.id = d.message_id
   WHERE d.message_id = ANY ($1::uuid[])`;

/** Where a send stands: `sending` while a sender holds it, `failed` with the provider's (or our) error code and title. */
export const DELIVERY_STATUSES = ['queued', 'sending', 'sent', 'delivered', 'read', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * The send state of the messages of `messages` (an alias whose `id` is a message's id), as a LEFT JOIN:
 * `delivery_status`, `delivery_error_code`, `delivery_error_title`, all NULL for a message with no
 * delivery (inbound, or stored with no channel account to send through). By the partition key of
 * both tables (message_deliveries is partitioned on message_id with the bounds of messages' id): a
 * lateral probe per message, so the planner cannot turn it into a hash join over every partition, and
 * each probe runs in the one partition of the message's month (run-time pruning), by its primary key.
 * For the few rows of a page, never for a scan.
 */
export function deliveryStateJoin(messages: string): { columns: string; join: string } {
  return {
    columns: `md.status AS delivery_status, md.error_code AS delivery_error_code, md.error_title AS delivery_error_title`,
    join: `LEFT JOIN LATERAL (SELECT d.status, d.error_code, d.error_title FROM message_deliveries d WHERE d.message_id = ${messages}.id LIMIT 1) md ON true`,
  };
}

/** SQL expressions of one delivery event's fields (each an expression over the statement's rows). */
export interface DeliveryEventFields {
  messageId: string;
  customerRef: string;
  channel: string;
  accountId: string;
  providerMessageId: string;
  executionId: string;
  status: string;
  at: string;
  /** A jsonb {code, title}, or NULL: added as `error` when not null. */
  error: string;
}

/** The data of message.delivered, message.read and message.failed (webhooks/event-schemas.ts), in one place. */
export function deliveryEventData(f: DeliveryEventFields): string {
  return `jsonb_build_object('message_id', ${f.messageId}, 'customer_id', ${f.customerRef}, 'channel', ${f.channel}, 'channel_account_id', ${f.accountId},
                            'provider_message_id', ${f.providerMessageId}, 'execution_id', ${f.executionId}, 'status', ${f.status},
                            'timestamp', to_char(${f.at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
         || CASE WHEN ${f.error} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('error', ${f.error}) END`;
}

/**
 * Sends not settled yet over every account (queued, or being sent; `sends`) and the age in seconds of
 * the oldest (`oldest_seconds`, null without any), read at scrape time (`/metrics`): the realtime
 * view's per-account backlog (src/analytics/realtime.repository.ts) summed, by the same partial index
 * of pending sends (idx_message_deliveries_pending), so settled sends are never read.
 */
export const SEND_BACKLOG = `SELECT count(*)::float8 AS sends, EXTRACT(EPOCH FROM clock_timestamp() - min(queued_at))::float8 AS oldest_seconds
    FROM message_deliveries WHERE status IN ('queued', 'sending')`;
