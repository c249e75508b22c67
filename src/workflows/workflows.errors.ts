import { DomainError } from '../common/errors/domain-error.js';

export class WorkflowNotFoundError extends DomainError {
  constructor() {
    super('WORKFLOW_NOT_FOUND', 404, 'Workflow not found');
  }
}

/** The workflow is the caller's, but it never had this version. */
export class WorkflowVersionNotFoundError extends DomainError {
  constructor() {
    super('WORKFLOW_VERSION_NOT_FOUND', 404, 'The workflow has no such version');
  }
}

export class WorkflowAlreadyExistsError extends DomainError {
  constructor() {
    super('WORKFLOW_ALREADY_EXISTS', 409, 'A workflow with this name exists', { field: 'name' });
  }
}

/** The graph as a whole is wrong: structure, ids, links, cycles, or empty on activation. */
export class InvalidWorkflowConfigError extends DomainError {
  constructor(message: string, field: string) {
    super('INVALID_WORKFLOW_CONFIG', 400, message, { field });
  }
}

/** One node breaks the rules of its type. */
export class InvalidNodeConfigError extends DomainError {
  constructor(message: string, field: string) {
    super('INVALID_NODE_CONFIG', 422, message, { field });
  }
}
