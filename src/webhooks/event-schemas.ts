import type { EventType } from '../events/event-types.js';

type JsonSchema = Record<string, unknown>;

const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const nullableStr = (description: string): JsonSchema => ({ type: 'string', nullable: true, description });
const CHANNEL = nullableStr('Channel (whatsapp, instagram, voice, ...); null when the execution has none');
const CUSTOMER = nullableStr('The customer\'s external id (as given by the channel or the caller); null when anonymous');

/** message.delivered, message.read and message.failed: a provider's status of a message sent through a channel account. */
function deliveryEvents(): Record<'message.delivered' | 'message.read' | 'message.failed', { description: string; schema: JsonSchema }> {
  const fields = {
    message_id: str('Message id', { format: 'uuid' }),
    customer_id: str("The customer's external id"),
    channel: str('Channel'),
    channel_account_id: str('The channel account it was sent through', { format: 'uuid' }),
    provider_message_id: { type: 'string', nullable: true, description: "The provider's id of the message (null when it failed before the provider accepted it)" },
    execution_id: { type: 'string', format: 'uuid', nullable: true, description: 'The workflow execution that sent it' },
    status: { type: 'string', enum: ['delivered', 'read', 'failed'], description: 'The new status' },
    timestamp: str("When the provider says it happened (ISO 8601)", { format: 'date-time' }),
  };
  const error = {
    type: 'object',
    description: "The provider's error code and title, or ours (CHANNEL_ACCOUNT_DELETED, CHANNEL_SEND_FAILED)",
    properties: { code: { type: 'string' }, title: { type: 'string' } },
  };
  return {
    'message.delivered': { description: "The provider delivered a message to the customer's device", schema: object('message.delivered', fields) },
    'message.read': { description: 'The customer read a message', schema: object('message.read', fields) },
    'message.failed': { description: 'A message could not be delivered (a permanent provider error, or retries exhausted)', schema: object('message.failed', { ...fields, error }) },
  };
}

function object(description: string, properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema {
  return { type: 'object', description, required, properties, additionalProperties: false };
}

const workflowCompleted = {
  workflow_id: str('Workflow id', { format: 'uuid' }),
  execution_id: str('Workflow execution id', { format: 'uuid' }),
  status: { type: 'string', enum: ['success', 'failed'], description: 'How the execution ended' },
  duration_ms: { type: 'integer', minimum: 0, description: 'From start to end' },
  customer_id: CUSTOMER,
  channel: CHANNEL,
};

/**
 * The `data` of each event type, as the engine writes it to the outbox (src/executions). Served by
 * `GET /v1/webhooks/event-types` and quoted in the OpenAPI description of the webhooks routes.
 */
export const EVENT_DATA_SCHEMAS: Record<EventType, { description: string; schema: JsonSchema }> = {
  'workflow.started': {
    description: 'A workflow execution begins',
    schema: object(
      'workflow.started',
      {
        workflow_id: str('Workflow id', { format: 'uuid' }),
        execution_id: str('Workflow execution id', { format: 'uuid' }),
        customer_id: CUSTOMER,
        trigger_id: { type: 'string', format: 'uuid', nullable: true, description: 'The trigger that fired (on a retry, the original\'s; null when it had none)' },
        channel: CHANNEL,
        retry_of: str('Only on a retry (POST .../retry): the failed execution it re-runs', { format: 'uuid' }),
      },
      ['workflow_id', 'execution_id', 'customer_id', 'trigger_id', 'channel'],
    ),
  },
  'workflow.completed': {
    description: 'A workflow finishes, with success or failure',
    schema: object('workflow.completed', workflowCompleted),
  },
  'workflow.failed': {
    description: 'A workflow fails with an error (sent besides workflow.completed)',
    schema: object('workflow.failed', {
      ...workflowCompleted,
      error: { type: 'object', nullable: true, description: 'The execution\'s error', properties: { code: { type: 'string' }, message: { type: 'string' } } },
    }),
  },
  'message.received': {
    description: 'A customer sends a message',
    schema: object(
      'message.received',
      {
        message_id: str('Message id', { format: 'uuid' }),
        customer_id: str('The customer\'s external id'),
        channel: str('Channel'),
        content: str('The message text (for a message without text, such as an image or a location, empty)'),
        language: nullableStr('Language, when known'),
        execution_id: { type: 'string', format: 'uuid', nullable: true, description: 'The running execution the message was kept for, else null' },
        channel_account_id: str('Only for a message that came through a channel account', { format: 'uuid' }),
        provider_message_id: str("Only for a message from a provider: the provider's id of it"),
        type: str("Only for a message from a provider: its type (text, interactive, button, image, audio, video, document, sticker, location, reaction, ...); only a message with text (a text, an interactive or button reply, an Instagram quick reply or postback) resumes executions and matches triggers"),
      },
      ['message_id', 'customer_id', 'channel', 'content', 'language', 'execution_id'],
    ),
  },
  'message.sent': {
    description: 'A message is sent to a customer',
    schema: object(
      'message.sent',
      {
        message_id: str('Message id', { format: 'uuid' }),
        customer_id: CUSTOMER,
        channel: CHANNEL,
        content: str('The message text'),
        execution_id: { type: 'string', format: 'uuid', nullable: true, description: 'The workflow execution that sent it; null for a person\'s message (author agent)' },
        node_id: nullableStr('The node that sent it; null for a person\'s message (author agent)'),
        author: { type: 'string', enum: ['bot', 'agent'], description: 'Who wrote it: a workflow (bot) or a person through POST /v1/customers/{customer_id}/messages (agent)' },
        channel_account_id: str('The channel account it is sent through (only when it has one; its delivery is reported by message.delivered, message.read or message.failed)', { format: 'uuid' }),
        template: str('Only when a WhatsApp template is sent (outside the reply window): its name'),
      },
      ['message_id', 'customer_id', 'channel', 'content', 'execution_id', 'node_id', 'author'],
    ),
  },
  ...deliveryEvents(),
  'trigger.activated': {
    description: 'A trigger fires',
    schema: object('trigger.activated', {
      trigger_id: str('Trigger id', { format: 'uuid' }),
      trigger_execution_id: str('Trigger execution id', { format: 'uuid' }),
      workflow_id: str('Workflow id', { format: 'uuid' }),
      workflow_execution_id: str('Workflow execution id', { format: 'uuid' }),
    }),
  },
  'customer.created': {
    description: 'A new customer is added (first contact)',
    schema: object('customer.created', { customer_id: str('The customer\'s external id'), channel: CHANNEL }, ['customer_id']),
  },
  'customer.updated': {
    description: 'Customer data is modified (form answers)',
    schema: object('customer.updated', {
      customer_id: str('The customer\'s external id'),
      attributes: { type: 'object', additionalProperties: true, description: 'The attributes written' },
      changed: { type: 'array', items: { type: 'string' }, description: 'Names of the attributes written' },
    }),
  },
  'conversation.handoff_started': {
    description: "A person takes a customer's conversation over: automation pauses for them (their running executions end as EXECUTION_HANDED_OFF)",
    schema: object('conversation.handoff_started', {
      customer_id: str('The customer\'s external id'),
      reason: nullableStr('Why, as given to POST /v1/customers/{customer_id}/handoff'),
      started_at: str('When it started', { format: 'date-time' }),
      ends_at: str('When it ends by itself (HANDOFF_TIMEOUT after it started or was last extended)', { format: 'date-time' }),
    }),
  },
  'conversation.handoff_ended': {
    description: "A handoff ends: the customer's messages start and resume workflows again",
    schema: object('conversation.handoff_ended', {
      customer_id: str('The customer\'s external id'),
      reason: nullableStr('The handoff\'s reason'),
      started_at: str('When it started', { format: 'date-time' }),
      ended_by: { type: 'string', enum: ['request', 'timeout'], description: 'DELETE /v1/customers/{customer_id}/handoff, or HANDOFF_TIMEOUT ran out' },
    }),
  },
};

/** One paragraph for OpenAPI descriptions: the payload and each event's data keys. */
export function eventTypesDescription(): string {
  const lines = Object.entries(EVENT_DATA_SCHEMAS).map(([type, { description, schema }]) => {
    const keys = Object.keys((schema.properties ?? {}) as Record<string, unknown>).join(', ');
    return `\`${type}\` (${description}): {${keys}}`;
  });
  return `Deliveries POST {id, type, timestamp, data, metadata:{webhook_id, retry_count, version:"1"}}. data by type: ${lines.join('; ')}. JSON Schemas: GET /v1/webhooks/event-types.`;
}
