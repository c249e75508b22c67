import { MAX_ORGANIZATION_LIMIT, ORGANIZATION_LIMITS, ORGANIZATION_LIMITS_REFRESH_MS, type OrganizationLimitsChange } from './organization-limits.js';

/**
 * The CLI's `org:limits` command (src/cli.ts): its options, usage and input checks. Every flag is
 * named after its limit's env variable (RATE_LIMIT_READ → --read, RATE_LIMIT_ANALYTICS_EXPORT →
 * --analytics-export); each takes a figure per hour, or `default` to clear the override.
 */
export const ORG_LIMITS_COMMAND = 'org:limits';

export const ORG_LIMITS_OPTIONS = {
  reset: { type: 'boolean' },
  ...Object.fromEntries(ORGANIZATION_LIMITS.map((l) => [l.flag, { type: 'string' }])),
} as Record<string, { type: 'string' | 'boolean' }>;

export const ORG_LIMITS_USAGE = `  npm run cli -- ${ORG_LIMITS_COMMAND} --org <organization id> [--reset] [${ORGANIZATION_LIMITS.map((l) => `--${l.flag} <n>|default`).join('] [')}]
      An organization's request limits (per credential, per hour), overriding the deployment's
      figures (${ORGANIZATION_LIMITS.map((l) => l.env).join(', ')}).
      <n>: an integer from 1 to ${MAX_ORGANIZATION_LIMIT}; default: back to the deployment's figure;
      a flag not given keeps its value; --reset clears every override first. No flag: prints the limits.
      Every API process applies a change within ${ORGANIZATION_LIMITS_REFRESH_MS / 1000} s (at once when Redis tells it).`;

/** The change asked for, or the error `invalid` makes for a bad figure. */
export function parseOrganizationLimits(values: Record<string, string | boolean | undefined>, invalid: (message: string) => Error): { change: OrganizationLimitsChange; reset: boolean } {
  const change: OrganizationLimitsChange = {};
  for (const l of ORGANIZATION_LIMITS) {
    const raw = values[l.flag];
    if (raw === undefined) continue;
    if (raw === 'default') change[l.name] = null;
    else if (typeof raw === 'string' && /^[1-9][0-9]{0,8}$/.test(raw) && Number(raw) <= MAX_ORGANIZATION_LIMIT) change[l.name] = Number(raw);
    else throw invalid(`--${l.flag} must be an integer from 1 to ${MAX_ORGANIZATION_LIMIT}, or default (got ${JSON.stringify(raw)})`);
  }
  return { change, reset: values.reset === true };
}
