import { Inject, Injectable } from '@nestjs/common';
import { getOptionsToken, getStorageToken, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/access.js';
import { AppConfig } from '../config/app-config.js';
import { rateLimitHeaders, type RateLimitEntry, type RateLimitResult } from './rate-limiter.js';
import type { RouteClassDeclaration } from './rate-limit.decorators.js';
import { type LimitOverrides, OrganizationLimits } from './organization-limits.js';
import { AUTH_FAILURE_POLICY, CREDENTIAL_POLICY, PUBLIC_POLICY, type PolicyName } from './rate-limit-policies.js';
import { RateLimitExceededError } from './rate-limits.errors.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';

declare module 'express' {
  interface Request {
    /** The request throttler's results (for a handler that adds a limit of its own, e.g. an api trigger's rate_limit). */
    rateLimits?: RateLimitResult[];
  }
}

const NONE: RateLimitResult[] = [];

/** Who a request is counted against: the credential, else the source address. */
export function credentialTracker(principal: Principal): string {
  return `${principal.credentialType}:${principal.credentialId}`;
}

export function addressTracker(req: Request): string {
  return req.ip ?? req.socket?.remoteAddress ?? 'unknown';
}

/**
 * Which limits apply to a request, checked and counted in one Redis round trip; the response
 * gets the tightest one's headers, or the request is refused with 429.
 */
@Injectable()
export class RequestLimits {
  private readonly figures: Map<string, { limit: number; windowSeconds: number }>;

  constructor(
    private readonly config: AppConfig,
    @Inject(getOptionsToken()) options: ThrottlerModuleOptions,
    @Inject(getStorageToken()) private readonly storage: ThrottlerStorage,
    private readonly organizations: OrganizationLimits,
  ) {
    const throttlers = Array.isArray(options) ? options : options.throttlers;
    this.figures = new Map(throttlers.map((t) => [t.name as string, { limit: Number(t.limit), windowSeconds: Math.ceil(Number(t.ttl) / 1000) }]));
  }

  get enabled(): boolean {
    return this.config.rateLimitsEnabled;
  }

  /**
   * Once the throttler has seen a request (counted it, or deliberately not: an exempt route),
   * `req.rateLimits` is set, so that nothing counts it twice. (A property every counted request gets
   * anyway: a symbol-keyed flag of its own cost measurable time.)
   */
  static markConsidered(req: Request): void {
    req.rateLimits ??= NONE;
  }

  static considered(req: Request): boolean {
    return req.rateLimits !== undefined;
  }

  /**
   * An authenticated request: the credential's limit, the route class's, the request's own
   * resource's (an api trigger's rate_limit), and the address's failed-authentication count
   * (checked, not counted). The credential's and the class's figures are the organization's
   * overrides where it has some (OrganizationLimits: a Map get, no round trip).
   */
  async authenticated(req: Request, res: Response, principal: Principal, declaration: RouteClassDeclaration | undefined, own?: RateLimitEntry): Promise<void> {
    const tracker = credentialTracker(principal);
    const overrides = this.organizations.of(principal.organizationId);
    const entries = [this.entry(CREDENTIAL_POLICY, CREDENTIAL_POLICY, tracker, true, overrides)];
    if (declaration) entries.push(this.entry(declaration.routeClass, `${declaration.group}-${declaration.routeClass}`, tracker, true, overrides));
    if (own) entries.push(own);
    entries.push(this.entry(AUTH_FAILURE_POLICY, AUTH_FAILURE_POLICY, addressTracker(req), false));
    await this.apply(req, res, entries);
  }

  /** A request to an unauthenticated route, per source address. */
  async anonymous(req: Request, res: Response): Promise<void> {
    await this.apply(req, res, [this.entry(PUBLIC_POLICY, PUBLIC_POLICY, addressTracker(req))]);
  }

  /** A 401 on /v1: counted per source address; past the allowance the answer is 429 instead. */
  async authenticationFailed(req: Request, res: Response): Promise<void> {
    await this.apply(req, res, [this.entry(AUTH_FAILURE_POLICY, AUTH_FAILURE_POLICY, addressTracker(req))]);
  }

  /**
   * A /v1 answer given before the guards ran (a body parser's 400, 413 or 415, an unknown route's
   * 404): counted as the guards would have counted the request, with the route unknown. A valid
   * credential (from the Authorization header, through the cached resolvers) draws on its own
   * limit; no credential or a bad one is a failed authentication of the source address, as its 401
   * would have been (otherwise such answers would tell a valid key from a guessed one without
   * costing the guesser anything). Returns the headers to add; throws the 429 to answer instead.
   */
  async earlyAnswer(req: Request, principal: Principal | undefined): Promise<Record<string, string>> {
    RequestLimits.markConsidered(req);
    if (!this.enabled) return {};
    const address = addressTracker(req);
    const entries = principal
      ? [this.entry(CREDENTIAL_POLICY, CREDENTIAL_POLICY, credentialTracker(principal), true, this.organizations.of(principal.organizationId)), this.entry(AUTH_FAILURE_POLICY, AUTH_FAILURE_POLICY, address, false)]
      : [this.entry(AUTH_FAILURE_POLICY, AUTH_FAILURE_POLICY, address)];
    return rateLimitHeaders(await this.count(req, entries));
  }

  /**
   * One limit; `count` false for a checked-only one; the organization's override of the figure, if
   * any. Built whole here rather than spread and extended (`{ ...entry, count: false }`): V8 makes
   * a new hidden class for every such copy.
   */
  private entry(throttler: PolicyName, policy: string, key: string, count = true, overrides?: LimitOverrides): RateLimitEntry {
    const figure = this.figures.get(throttler);
    if (!figure) throw new Error(`No throttler named ${throttler}`);
    return { policy, key, limit: overrides?.[throttler] ?? figure.limit, windowSeconds: figure.windowSeconds, count };
  }

  private async apply(req: Request, res: Response, entries: RateLimitEntry[]): Promise<void> {
    RequestLimits.markConsidered(req);
    if (!this.enabled) return;
    for (const [name, value] of Object.entries(rateLimitHeaders(await this.count(req, entries)))) res.setHeader(name, value);
  }

  /** Checks and counts in one round trip; the limits shown, or the 429. */
  private async count(req: Request, entries: RateLimitEntry[]): Promise<RateLimitResult[]> {
    const outcome = await (this.storage as RedisThrottlerStorage).incrementAll(entries);
    // Checked-only limits show in the headers when they refuse, not while they merely watch.
    const shown = outcome.results.filter((r, i) => entries[i].count !== false || !r.allowed);
    req.rateLimits = shown;
    if (!outcome.allowed) {
      const refusing = outcome.results.filter((r) => !r.allowed).reduce((a, b) => (b.retryAfter > a.retryAfter ? b : a));
      throw new RateLimitExceededError(refusing, shown);
    }
    return shown;
  }
}
