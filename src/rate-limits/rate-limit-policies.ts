import type { ThrottlerOptions } from '@nestjs/throttler';
import type { AppConfig } from '../config/app-config.js';

/**
 * Route classes (the specification's Limits table): workflow and trigger routes are read (list/get),
 * write (create/update), delete or execution (activate, deactivate, pause, resume, fire, an execution's retry and cancel, executions
 * and metrics reads); analytics routes realtime, historical, reports or export. Counted per
 * credential and per resource (`workflows-write` and `triggers-write` are separate allowances).
 */
export const ROUTE_CLASSES = ['read', 'write', 'delete', 'execution', 'realtime', 'historical', 'reports', 'export'] as const;
export type RouteClass = (typeof ROUTE_CLASSES)[number];

/** Limits on every request of a kind, whatever the route: per credential, per source IP. */
export const CREDENTIAL_POLICY = 'credential';
export const PUBLIC_POLICY = 'public';
export const AUTH_FAILURE_POLICY = 'auth-failures';

export type PolicyName = RouteClass | typeof CREDENTIAL_POLICY | typeof PUBLIC_POLICY | typeof AUTH_FAILURE_POLICY;

const HOUR = 3600;

/**
 * The named throttlers of @nestjs/throttler, one per policy, built from the configuration
 * (every figure has an env variable; README lists them). `ttl` is in milliseconds as the package
 * expects; windows are fixed.
 */
export function namedThrottlers(config: AppConfig): (ThrottlerOptions & { name: PolicyName; limit: number; ttl: number })[] {
  const f = config.rateLimits;
  const hourly = (name: PolicyName, limit: number) => ({ name, limit, ttl: HOUR * 1000 });
  return [
    hourly(CREDENTIAL_POLICY, f.perCredential),
    hourly('read', f.read),
    hourly('write', f.write),
    hourly('delete', f.delete),
    hourly('execution', f.execution),
    hourly('realtime', f.analyticsRealtime),
    hourly('historical', f.analyticsHistorical),
    hourly('reports', f.analyticsReports),
    hourly('export', f.analyticsExport),
    hourly(PUBLIC_POLICY, f.publicPerIp),
    { name: AUTH_FAILURE_POLICY, limit: f.authFailuresPerMinute, ttl: 60_000 },
  ];
}
