import { createHmac } from 'node:crypto';

/** The JSON body of a delivery (docs/API.md, "Outbound webhooks"). */
export interface DeliveryPayload {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  metadata: { webhook_id: string; retry_count: number; version: '1' };
}

export const USER_AGENT = 'WorkflowAutomationService-Webhooks/1.0';

/** Standard Webhooks key: the bytes after `whsec_` base64-decoded when the secret has that form, else its UTF-8 bytes. */
export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

/** `X-Service-Signature`: lowercase hex HMAC-SHA256 of the exact raw body, keyed with the secret string. */
export function serviceSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** One `v1,<base64>` signature of `{id}.{timestamp}.{body}` (Standard Webhooks). */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Every header of a delivery. `secrets` is the current secret first; older ones still valid during a
 * rotation add their signature to `webhook-signature` (space-separated, as Standard Webhooks allows).
 */
export function deliveryHeaders(secrets: readonly string[], deliveryId: string, eventType: string, body: string, now: Date = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const current = secrets[0] as string;
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Signature': serviceSignature(current, body),
    'X-Service-Event': eventType,
    'X-Service-Delivery': deliveryId,
    'X-Service-Timestamp': String(timestamp),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => standardSignature(s, deliveryId, timestamp, body)).join(' '),
  };
}
