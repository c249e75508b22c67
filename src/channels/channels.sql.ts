/**
 * SQL fragments of the channels module's tables for the execution engine's statements (docs/ARCHITECTURE.md,
 * "Table ownership"): the engine's run commit queues the sends of the messages it stores, and a run
 * that sends through an account reads the account's reply window. Owned here, so that these tables'
 * columns are named in this module only.
 */

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
 * The account's provider and when the customer last wrote to it ($1: account id, $2: customer row id):
 * no row when the account is gone. By the customer's messages index, newest first.
 */
export const REPLY_WINDOW_SQL = `
  SELECT a.provider,
         (SELECT m.created_at FROM messages m
           WHERE m.customer_id = $2 AND m.channel_account_id = a.id AND m.direction = 'inbound'
           ORDER BY m.created_at DESC LIMIT 1) AS last_inbound_at
    FROM channel_accounts a WHERE a.id = $1`;

/** The send state of messages ($1: message ids), for the steps that sent them. */
export const DELIVERY_STATES_SQL = `
  SELECT d.message_id, d.status, d.error_code, d.error_title, m.provider_message_id
    FROM message_deliveries d JOIN messages m ON m.id = d.message_id
   WHERE d.message_id = ANY ($1::uuid[])`;
