import { applyDecorators, type Type } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal } from '../auth/access.js';
import type { RateLimitEntry } from './rate-limiter.js';
import { Reflector } from '@nestjs/core';
import type { RouteClass } from './rate-limit-policies.js';

export interface RouteClassDeclaration {
  /** The resource whose allowance the route draws on: `workflows`, `triggers`, `analytics`. */
  group: string;
  routeClass: RouteClass;
}

export const RATE_LIMIT_CLASS = Reflector.createDecorator<RouteClassDeclaration>();
export const NO_RATE_LIMIT = Reflector.createDecorator<string>();

/**
 * The route's class in the specification's Limits table, counted on top of the per-credential limit,
 * e.g. `@RateLimitClass('workflows', 'delete')`, `@RateLimitClass('analytics', 'export')`.
 */
export function RateLimitClass(group: string, routeClass: RouteClass) {
  return applyDecorators(RATE_LIMIT_CLASS({ group, routeClass }));
}

/**
 * Exempt from the request throttler, with the reason: probes and metrics scrapes, and routes whose
 * limits are their own (inbound webhooks: per trigger, after the signature check).
 */
export function NoRateLimit(reason: string) {
  return NO_RATE_LIMIT(reason);
}

/**
 * A limit of the request's own resource (an api trigger's configured `rate_limit`), which the
 * request throttler counts in the same Redis round trip as the credential's and the route class's.
 * The source is a provider (looked up through the ModuleRef, any module) that knows the resource's
 * limit from a short-lived cache, so finding it costs no Redis round trip.
 */
export interface RequestLimitSource {
  /** The entry to count for this request, or undefined when the resource has none for this caller. */
  limitFor(req: Request, principal: Principal): Promise<RateLimitEntry | undefined>;
}

export interface ResourceLimitDeclaration {
  source: Type<RequestLimitSource>;
  /** For docs/ROUTES.md, e.g. "trigger-rate-limit: the trigger's own `rate_limit`/h". */
  label: string;
}

export const REQUEST_LIMIT_SOURCE = Reflector.createDecorator<ResourceLimitDeclaration>();

/** e.g. `@CountsResourceLimit(TriggerRateLimits, ...)` on the api trigger's fire route. */
export function CountsResourceLimit(source: Type<RequestLimitSource>, label: string) {
  return REQUEST_LIMIT_SOURCE({ source, label });
}
