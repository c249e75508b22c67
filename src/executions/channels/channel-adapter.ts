import type { EntityManager } from 'typeorm';
import type { Message } from '../entities/message.entity.js';

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
 * How a message reaches a customer on one channel. `send` runs inside the engine's
 * transaction, so a message is recorded exactly once with the step that sent it; connectors
 * that talk to the messaging provider subscribe to the resulting `message.sent` event.
 */
export interface ChannelAdapter {
  send(manager: EntityManager, message: OutboundMessage): Promise<Message>;
}

export const CHANNEL_ADAPTERS = Symbol('CHANNEL_ADAPTERS');

/** Adapters by channel; channels without their own use the built-in storing adapter. */
export type ChannelAdapters = ReadonlyMap<string, ChannelAdapter> & { fallback: ChannelAdapter };
