import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type MessageDirection = 'inbound' | 'outbound';
/** Who wrote a message: the customer (inbound), a workflow (`bot`) or a person (`agent`). */
export type MessageAuthor = 'customer' | 'bot' | 'agent';

/** Every message received from or sent to a customer. */
@Entity({ name: 'messages' })
@Index('idx_messages_customer_created', ['customerId', 'createdAt', 'id'])
@Index('idx_messages_execution', ['executionId', 'createdAt'])
export class Message {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'customer_id', type: 'uuid' })
  customerId: string;

  @Column({ type: 'varchar', length: 32 })
  channel: string;

  @Column({ type: 'varchar', length: 8 })
  direction: MessageDirection;

  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'varchar', length: 16, nullable: true })
  language: string | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata: Record<string, unknown>;

  /** The execution that sent it (outbound) or that it was routed to (inbound reply kept for a running execution). */
  @Column({ name: 'execution_id', type: 'uuid', nullable: true })
  executionId: string | null;

  @Column({ name: 'node_id', type: 'varchar', length: 64, nullable: true })
  nodeId: string | null;

  /** For inbound messages kept for a running execution: when the engine consumed it (null: not read yet, or never). */
  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt: Date | null;

  /** The channel account it came in or goes out through (null: POST /v1/messages without one, or no provider). */
  @Column({ name: 'channel_account_id', type: 'uuid', nullable: true })
  channelAccountId: string | null;

  /** The provider's id of the message (wamid…, mid…): unique per account. */
  @Column({ name: 'provider_message_id', type: 'varchar', length: 255, nullable: true })
  providerMessageId: string | null;

  /** For an inbound message held for a burst's turn (a channel account's burst_window_ms): the burst it belongs to. */
  @Column({ name: 'burst_id', type: 'uuid', nullable: true })
  burstId: string | null;

  /** On a burst's first message routed to a running execution: the burst's joined text, which the run reads as its one reply. */
  @Column({ name: 'turn_content', type: 'text', nullable: true })
  turnContent: string | null;
  /** `agent` for a person's message; NULL: as the direction says (inbound: `customer`, outbound: `bot`). Read it through authorOf. */
  @Column({ type: 'varchar', length: 8, nullable: true })
  author: MessageAuthor | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** Who wrote the message: its `author`, else what its direction says. */
export function authorOf(m: Pick<Message, 'author' | 'direction'>): MessageAuthor {
  return m.author ?? (m.direction === 'inbound' ? 'customer' : 'bot');
}
