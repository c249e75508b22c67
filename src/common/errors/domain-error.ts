export interface ErrorBody {
  code: string;
  message: string;
  details?: string;
  field?: string;
  retry_after?: number;
}

/**
 * Base of every error a client is meant to see. Each domain declares its own subclasses in
 * `<domain>.errors.ts`; the global filter renders them as the specification's error envelope.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly extra: { field?: string; details?: string; retryAfter?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.extra.details !== undefined) body.details = this.extra.details;
    if (this.extra.field !== undefined) body.field = this.extra.field;
    if (this.extra.retryAfter !== undefined) body.retry_after = this.extra.retryAfter;
    return body;
  }
}
