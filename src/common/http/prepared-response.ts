import type { Response } from 'express';

/**
 * A complete answer decided before the handler ran (an idempotent replay, see src/idempotency):
 * thrown by a guard, written as it is by the error filter. Guards cannot answer with a status and
 * body of their own; everything they throw reaches the filter.
 */
export class PreparedResponse {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string,
  ) {}

  writeTo(res: Response): void {
    res.status(this.status);
    for (const [name, value] of Object.entries(this.headers)) res.setHeader(name, value);
    res.send(this.body);
  }
}
