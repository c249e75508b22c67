import type { RunWrites } from '../run-writes.js';

export interface OutboundMessage {
  organizationId: string;
  customerId: string;
  customerRef: string;
  channel: string;
  content: string;
  executionId: string;
  nodeId: string;
  channelAccountId: string | null;
  /** Set when a template is sent instead of free text (outside the reply window). */
  template?: MessageTemplate;
}

/** A WhatsApp message template (a `message` node's `template`). */
export interface MessageTemplate {
  name: string;
  language: string;
  components?: unknown[];
}

/**
 * How a message reaches a customer on one channel. `send` records the message (and its
 * `message.sent` event) in the run's writes, which commit atomically with the step that sent it,
 * so a message is recorded exactly once. A message with a channel account is also queued for the
 * channels module's sender, which delivers it to the provider after the commit.
 */
export interface ChannelAdapter {
  send(writes: RunWrites, message: OutboundMessage): { messageId: string };
}

export const CHANNEL_ADAPTERS = Symbol('CHANNEL_ADAPTERS');

/** Adapters by channel; channels without their own use the built-in storing adapter. */
export type ChannelAdapters = ReadonlyMap<string, ChannelAdapter> & { fallback: ChannelAdapter };
