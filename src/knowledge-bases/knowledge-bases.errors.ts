import { DomainError } from '../common/errors/domain-error.js';

export class KnowledgeBaseNotFoundError extends DomainError {
  constructor() {
    super('KNOWLEDGE_BASE_NOT_FOUND', 404, 'Knowledge base not found');
  }
}

/**
 * The configured AI provider did not give a usable answer (HTTP error, timeout, malformed body).
 * Not a DomainError: it never reaches an HTTP client; the execution engine records it as the
 * step's failure, so the message says what went wrong without any credential.
 */
export class AiProviderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AiProviderError';
  }
}
