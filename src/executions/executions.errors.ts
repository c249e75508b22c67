import { DomainError } from '../common/errors/domain-error.js';

export class ExecutionNotFoundError extends DomainError {
  constructor() {
    super('EXECUTION_NOT_FOUND', 404, 'Execution not found');
  }
}

/** Error objects recorded on executions (not thrown at clients). */
export const ExecutionErrorCodes = {
  triggerInactive: 'TRIGGER_INACTIVE',
  workflowInactive: 'WORKFLOW_INACTIVE',
  workflowVersionMissing: 'WORKFLOW_VERSION_MISSING',
  conversationTimeout: 'CONVERSATION_TIMEOUT',
  nodeFailed: 'NODE_FAILED',
  noRecipient: 'NO_RECIPIENT',
  /** A node failed transiently on each of its NODE_RETRY_ATTEMPTS attempts. */
  nodeRetriesExhausted: 'NODE_RETRIES_EXHAUSTED',
  /** Ended by POST .../cancel. */
  cancelled: 'EXECUTION_CANCELLED',
  /** Ended because a person took the customer's conversation over (POST /v1/customers/{id}/handoff). */
  handedOff: 'EXECUTION_HANDED_OFF',
  /** A phone call's execution whose call ended (hung up, busy, no answer…) before the workflow did. */
  callEnded: 'CALL_ENDED',
} as const;

/** POST .../retry of an execution that has not failed, or was already retried (at most one retry each). */
export class ExecutionNotRetryableError extends DomainError {
  constructor(message: string) {
    super('EXECUTION_NOT_RETRYABLE', 409, message);
  }
}

/** POST .../cancel of an execution that has already ended (success or failed). */
export class ExecutionAlreadyFinishedError extends DomainError {
  constructor(status: string) {
    super('EXECUTION_ALREADY_FINISHED', 409, `The execution has already ended (status ${status})`);
  }
}
