import { DomainError } from '../common/errors/domain-error.js';

export class ExecutionNotFoundError extends DomainError {
  constructor() {
    super('EXECUTION_NOT_FOUND', 404, 'Execution not found');
  }
}

export class CustomerNotFoundError extends DomainError {
  constructor() {
    super('CUSTOMER_NOT_FOUND', 404, 'Customer not found');
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
} as const;
