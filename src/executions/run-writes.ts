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
}

export interface OutboundMessageRecord {
  id: string;
  organizationId: string;
  customerId: string;
  channel: string;
  content: string;
  nodeId: string;
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
  /** Ids of the inbound replies this run read. */
  readonly consumed: string[] = [];
  /** Answers to store on the customer, merged in order (a later value wins, as successive `attributes || x` would). */
  customerAttributes: Record<string, unknown> | null = null;

  mergeCustomerAttributes(attributes: Record<string, unknown>): void {
    this.customerAttributes = { ...this.customerAttributes, ...attributes };
  }
}
