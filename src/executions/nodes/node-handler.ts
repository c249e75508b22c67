import type { MessageTemplate } from '../channels/channel-adapter.js';
import type { WorkflowNode } from '../../workflows/node-types/node-type.js';
import type { ExecutionState, WorkflowExecution } from '../entities/workflow-execution.entity.js';

/**
 * What a node handler can see and do while it runs. No transaction is open: what it sends and
 * stores is collected in the run's writes and committed with the run in one statement
 * (RunsRepository.commit), or not at all.
 */
export interface NodeContext {
  execution: Readonly<WorkflowExecution>;
  node: WorkflowNode;
  /** Mutable: handlers keep their progress here (a form's answers). */
  state: ExecutionState;
  /** The customer's reply not yet consumed, oldest first; undefined when there is none. */
  nextReply(): string | undefined;
  /**
   * Sends a message to the customer through the channel adapter. Through a channel account outside
   * the customer's reply window, `template` is sent instead (WhatsApp), else the node fails with
   * CHANNEL_WINDOW_CLOSED.
   */
  send(content: string, options?: { template?: MessageTemplate }): Promise<{ messageId: string }>;
  /** Stores answers on the customer record (emits customer.updated). */
  updateCustomer(attributes: Record<string, unknown>): Promise<void>;
}

export type NodeOutcome =
  | { status: 'completed'; input: Record<string, unknown>; output: Record<string, unknown>; startedAt?: Date }
  | { status: 'waiting' }
  | { status: 'failed'; input: Record<string, unknown>; output?: Record<string, unknown>; error: { code: string; message: string } };

/**
 * One node type's behaviour at run time. Adding a node type: its configuration rules in
 * src/workflows/node-types/, its handler here, one line in NODE_HANDLERS.
 */
export interface NodeHandler {
  readonly type: string;
  run(ctx: NodeContext): Promise<NodeOutcome>;
}

export const NODE_HANDLERS = Symbol('NODE_HANDLERS');

/**
 * Thrown by a handler for a failure that asking again later may cure (a provider's timeout, 429 or
 * 5xx), with a message a client may read (never an upstream body). The engine attempts the node
 * again with back-off; any other error a handler throws (database, network) is retried the same
 * way but shown to clients without its message.
 */
export class TransientNodeError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'TransientNodeError';
  }
}

/** Thrown by a handler (or the context) for a failure of the node itself: recorded as a failed step, not retried. */
export class NodeFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
