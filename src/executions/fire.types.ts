import type { ExecutionStatus } from './entities/workflow-execution.entity.js';

/** What a trigger firing hands to the execution engine. */
export interface FireInput {
  organizationId: string;
  /** Null: the workflow is started without a trigger (a channel account's settings.workflow_id); no trigger execution is written. */
  triggerId: string | null;
  workflowId: string;
  /** Why the firing is refused, if it is (inactive trigger or workflow): recorded as a failed trigger execution. */
  refusal?: { code: string; message: string };
  customerRef?: string | null;
  /** The customer's row when the caller has just stored it (an inbound message); otherwise customerRef is upserted. */
  customerId?: string | null;
  channel?: string | null;
  /** The channel account the execution replies through (a message that came in through it). */
  channelAccountId?: string | null;
  message?: string | null;
  data?: Record<string, unknown>;
  metadata: { user_agent: string | null; timestamp: string; source: 'message' | 'webhook' | 'api' | 'schedule'; scheduled_for?: string };
}

export interface FireResult {
  /**
   * The trigger and its execution. A firing always has them; a message resuming a waiting
   * execution reports the execution's, which the database allows to be absent (null).
   */
  triggerId: string | null;
  triggerExecutionId: string | null;
  workflowExecutionId: string | null;
  status: ExecutionStatus;
  error: { code: string; message: string } | null;
}
