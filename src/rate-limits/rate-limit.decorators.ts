import { applyDecorators } from '@nestjs/common';
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
