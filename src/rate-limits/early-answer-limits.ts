import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DomainError } from '../common/errors/domain-error.js';
import { RequestLimits } from './request-limits.service.js';
import type { Principal } from '../auth/access.js';
import { BearerStrategy, bearerToken } from '../auth/guards/bearer.strategy.js';
import type { EarlyAnswerCounter } from '../common/errors/early-answer.js';

/** /v1 paths whose answers count against the request limits (the inbound webhooks count per trigger, on their own). */
const LIMITED_PATH = /^\/v1(\/|$)/;
const OWN_LIMITS_PATH = /^\/v1\/hooks(\/|$)/;

/**
 * Rate limits of a /v1 answer given before the guards ran (a body parser's 400, 413 or 415, an
 * unknown route's 404), for the error filter: the credential of the Authorization header through
 * the same resolvers (and their caches) as the authentication guard, then RequestLimits.earlyAnswer.
 */
@Injectable()
export class EarlyAnswerLimits implements EarlyAnswerCounter {
  constructor(
    private readonly strategy: BearerStrategy,
    private readonly limits: RequestLimits,
  ) {}

  /** Whether this answer still has to be counted: a /v1 request the throttler has not seen, limits on. */
  applies(req: Request): boolean {
    return this.limits.enabled && LIMITED_PATH.test(req.path) && !OWN_LIMITS_PATH.test(req.path) && !RequestLimits.considered(req);
  }

  /**
   * Counts the request; the headers to add, or throws the 429 to answer instead. undefined when the
   * credential could not be resolved for another reason than being bad (e.g. the database is down):
   * then nothing is counted.
   */
  async count(req: Request): Promise<Record<string, string> | undefined> {
    const token = bearerToken(req.headers.authorization);
    let principal: Principal | undefined;
    if (token) {
      try {
        principal = await this.strategy.validate(token);
      } catch (error) {
        if (!(error instanceof DomainError && error.status === 401)) return undefined;
      }
    }
    return this.limits.earlyAnswer(req, principal);
  }
}
