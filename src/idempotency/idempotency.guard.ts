import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PreparedResponse } from '../common/http/prepared-response.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../common/http/idempotency-headers.js';
import { idempotencyScope, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, IdempotencyUnavailableError, InvalidIdempotencyKeyError } from './idempotency.errors.js';
import { idempotencyRequests, IdempotencyStore, IdempotencyStoreUnavailable, type StoredResponse } from './idempotency.store.js';

/** Authenticated routes under /v1 (the inbound webhooks are public: no credential to scope a key by). */
const V1_PATH = /^\/v1\//;
/** The headers a replay repeats: what the body is, and where the result lives. */
const KEPT_HEADERS = ['content-type', 'location'] as const;

/**
 * Whether an answer is the outcome of the request, to be replayed for 24 h, rather than a refusal
 * to retry. 2xx and the handler's 4xx are stored; not stored (the key is released):
 * - 400 and 422: the request's content was refused (the ValidationPipe's and the services' checks,
 *   which run before any write), so the client may correct the body and retry with the same key;
 * - 429: refused before doing anything;
 * - 5xx: a fault of ours or a dependency down (503): the client retries with the same key once it
 *   is back (docs/DECISIONS.md, "Idempotency keys", "Claim and store", says why this is safer here than replaying the 5xx for 24 h).
 */
export function storesAnswer(status: number): boolean {
  if (status >= 500) return false;
  return status !== 400 && status !== 422 && status !== 429;
}

/**
 * Idempotency-Key on POST under /v1 (./README.md, docs/DECISIONS.md "Idempotency keys"). The last
 * global guard: it runs once the caller is known and allowed (authentication, rate limits, access),
 * before the pipes. A guard rather than an interceptor: requests without the header pay one property
 * read, not an RxJS pipeline, and the answer is captured where it is written (res.end), so that the
 * error filter's envelopes are stored as sent.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
  constructor(private readonly store: IdempotencyStore) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    const header = req.headers['idempotency-key'];
    if (header === undefined || req.method !== 'POST' || !req.principal || !V1_PATH.test(req.path)) return true;
    return this.admit(req, context.switchToHttp().getResponse<Response>(), header);
  }

  private async admit(req: Request, res: Response, header: string | string[]): Promise<boolean> {
    const principal = req.principal!;
    const { key, problem } = parseIdempotencyKey(header);
    if (key === undefined) throw new InvalidIdempotencyKeyError(problem ?? 'Idempotency-Key is invalid');
    const redisKey = this.store.key(idempotencyScope(principal, key));
    const fingerprint = requestFingerprint({ method: req.method, path: req.path, query: req.query, body: req.body });

    let outcome;
    try {
      outcome = await this.store.claim(redisKey, fingerprint);
    } catch (error) {
      if (!(error instanceof IdempotencyStoreUnavailable)) throw error;
      idempotencyRequests.inc({ outcome: 'unavailable' });
      throw new IdempotencyUnavailableError();
    }
    idempotencyRequests.inc({ outcome: outcome.kind === 'stored' ? 'replayed' : outcome.kind });
    switch (outcome.kind) {
      case 'mismatch':
        throw new IdempotencyKeyReusedError();
      case 'in_use':
        throw new IdempotencyKeyInUseError();
      case 'stored':
        throw new PreparedResponse(outcome.response.status, { ...outcome.response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' }, outcome.response.body);
      case 'claimed':
        this.settleWhenAnswered(res, redisKey, outcome.token);
        return true;
    }
  }

  /**
   * Holds back the end of the answer until it is stored (or the key released): once a client has an
   * answer, a retry replays it instead of meeting 409 IDEMPOTENCY_KEY_IN_USE. Every answer ends with
   * res.end, whether the handler's result or the error filter's envelope.
   */
  private settleWhenAnswered(res: Response, redisKey: string, token: string): void {
    const chunks: Buffer[] = [];
    const write = res.write;
    const end = res.end;
    const capture = (chunk: unknown, encoding: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const store = this.store;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      capture(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).apply(res, [chunk, ...rest]);
    }) as Response['write'];
    res.end = ((...args: unknown[]) => {
      res.write = write;
      res.end = end;
      if (typeof args[0] !== 'function') capture(args[0], args[1]);
      const status = res.statusCode;
      const settled = storesAnswer(status) ? store.complete(redisKey, token, answerOf(res, status, chunks)) : store.release(redisKey, token);
      void settled.finally(() => (end as (...a: unknown[]) => Response).apply(res, args));
      return res;
    }) as Response['end'];
  }
}

function answerOf(res: Response, status: number, chunks: Buffer[]): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return { status, headers, body: Buffer.concat(chunks).toString('utf8') };
}
