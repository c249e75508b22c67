import type { DomainEvent } from '../events/event-types.js';

export interface StepRecord {
  nodeId: string;
  type: string;
  status: 'completed' | 'failed';
  startedAt: Date;
  completedAt: Date;
  durationMs: number;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  /** How many times the node was attempted (1 unless it failed transiently and was tried again). */
  attempt: number;
}

export interface OutboundMessageRecord {
  id: string;
  organizationId: string;
  customerId: string;
  channel: string;
  content: string;
  nodeId: string;
  /** The account it leaves through (a send is queued for it with the commit); null: stored and emitted only. */
  channelAccountId: string | null;
  /** `template`: a WhatsApp template outside the reply window (in metadata.template). */
  kind: 'text' | 'template';
  /** Handed to the channels module's sender with the commit (an account, and a channel whose messages are sent, not spoken in a call). */
  queued: boolean;
  metadata: Record<string, unknown>;
}

/**
 * Everything one run of an execution writes — steps, messages sent, replies consumed, answers
 * stored on the customer, events — collected while its nodes run and committed together with
 * the execution's new state in one statement (`RunsRepository.commit`): all or nothing, as a
 * transaction would, but in one round trip. Insertion order is kept (messages and steps get
 * increasing created_at in the order they were recorded).
 */
export class RunWrites {
  readonly steps: StepRecord[] = [];
  readonly messages: OutboundMessageRecord[] = [];
  readonly events: DomainEvent[] = [];
  /** W3C traceparent of the run's span (traces on only), stored with its events for their webhook deliveries. */
  traceparent?: string;
  /** Ids of the inbound replies this run read. */
  readonly consumed: string[] = [];
  /** Answers to store on the customer, merged in order (a later value wins, as successive `attributes || x` would). */
  customerAttributes: Record<string, unknown> | null = null;

  mergeCustomerAttributes(attributes: Record<string, unknown>): void {
    this.customerAttributes = { ...this.customerAttributes, ...attributes };
  }

  /** Where the writes stand now, to undo what a node attempt wrote before it failed transiently. */
  mark(): RunWritesMark {
    return {
      steps: this.steps.length,
      messages: this.messages.length,
      events: this.events.length,
      consumed: this.consumed.length,
      customerAttributes: this.customerAttributes === null ? null : { ...this.customerAttributes },
    };
  }

  /** Forgets every write recorded since `mark` (the replies read since are unread again). */
  rollback(mark: RunWritesMark): void {
    this.steps.length = mark.steps;
    this.messages.length = mark.messages;
    this.events.length = mark.events;
    this.consumed.length = mark.consumed;
    this.customerAttributes = mark.customerAttributes;
  }
}

export interface RunWritesMark {
  steps: number;
  messages: number;
  events: number;
  consumed: number;
  customerAttributes: Record<string, unknown> | null;
}
