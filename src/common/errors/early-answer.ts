import type { Request } from 'express';

/**
 * Counts a /v1 answer given before the guards ran (a body parser's 400, 413 or 415, an unknown
 * route's 404) against the caller's rate limits, for the error filter. Provided under
 * EARLY_ANSWER_LIMITS by the application module (the rate-limits module implements it), so that
 * this folder depends on no domain module; without a provider, nothing is counted.
 */
export interface EarlyAnswerCounter {
  /** Whether this answer still has to be counted. */
  applies(req: Request): boolean;
  /** Counts the request; the headers to add, or throws the 429 to answer instead; undefined when nothing was counted. */
  count(req: Request): Promise<Record<string, string> | undefined>;
}

export const EARLY_ANSWER_LIMITS = Symbol('EARLY_ANSWER_LIMITS');
