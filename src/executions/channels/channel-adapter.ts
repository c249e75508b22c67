import type { RunWrites } from '../run-writes.js';

export interface OutboundMessage {
  organizationId: string;
  customerId: string;
  customerRef: string;
  channel: string;
  content: string;
  executionId: string;
  nodeId: string;
}

/**
 * How a message reaches a customer on one channel. `send` records the message (and its
 * `message.sent` event) in the run's writes, which commit atomically with the step that sent it,
 * so a message is recorded exactly once; connectors that talk to the messaging provider
 * subscribe to the resulting `message.sent` event.
 */
export interface ChannelAdapter {
  send(writes: RunWrites, message: OutboundMessage): { messageId: string };
}

export const CHANNEL_ADAPTERS = Symbol('CHANNEL_ADAPTERS');

/** Adapters by channel; channels without their own use the built-in storing adapter. */
export type ChannelAdapters = ReadonlyMap<string, ChannelAdapter> & { fallback: ChannelAdapter };
