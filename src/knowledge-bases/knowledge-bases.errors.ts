import { DomainError } from '../common/errors/domain-error.js';

export class KnowledgeBaseNotFoundError extends DomainError {
  constructor() {
    super('KNOWLEDGE_BASE_NOT_FOUND', 404, 'Knowledge base not found');
  }
}

/**
 * The configured AI provider did not give a usable answer. `transient` when asking again later
 * may succeed (timeout, unreachable, HTTP 408/429/5xx, a garbled body): the execution's job is
 * retried. Otherwise the provider refused (another 4xx, an answer without content) and the node
 * fails. The message is what a client may see in the execution's error: the status or kind of
 * failure, never the provider's body, address or credentials (those are logged).
 */
export class AiProviderError extends Error {
  readonly transient: boolean;

  constructor(message: string, options: { cause?: unknown; transient: boolean }) {
    super(message, { cause: options.cause });
    this.name = 'AiProviderError';
    this.transient = options.transient;
  }
}
