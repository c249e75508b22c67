import { describe, expect, it } from 'vitest';
import { AppConfig } from '../config/app-config.js';
import { ORG_LIMITS_OPTIONS, parseOrganizationLimits } from './organization-limits.cli.js';
import { effectiveLimits, ORGANIZATION_LIMITS } from './organization-limits.js';
import { namedThrottlers } from './rate-limit-policies.js';

const config = AppConfig.fromEnv({}, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_CREDENTIAL: '7', RATE_LIMIT_ANALYTICS_EXPORT: '3' });
const invalid = (message: string) => new Error(message);

describe('organization limits', () => {
  it('each overridable limit is a named throttler of one hour, with a flag of its own', () => {
    const throttlers = new Map(namedThrottlers(config).map((t) => [t.name as string, t.ttl]));
    for (const l of ORGANIZATION_LIMITS) expect(throttlers.get(l.throttler), l.name).toBe(3600_000);
    expect(Object.keys(ORG_LIMITS_OPTIONS).sort()).toEqual(['reset', ...ORGANIZATION_LIMITS.map((l) => l.flag)].sort());
  });

  it('effective limits: the override where there is one, else the deployment figure', () => {
    const limits = effectiveLimits(config, { credential: 100000, export: 40 });
    expect(limits.per_credential_per_hour).toEqual({ value: 100000, source: 'override' });
    expect(limits.analytics_export_per_hour).toEqual({ value: 40, source: 'override' });
    expect(limits.read_per_hour).toEqual({ value: config.rateLimits.read, source: 'default' });
    expect(effectiveLimits(config, undefined).per_credential_per_hour).toEqual({ value: 7, source: 'default' });
    expect(effectiveLimits(config, undefined).analytics_export_per_hour).toEqual({ value: 3, source: 'default' });
  });

  it('parses figures, default and --reset; a flag not given is left out', () => {
    expect(parseOrganizationLimits({ 'per-credential': '100000', read: 'default', reset: true }, invalid)).toEqual({
      change: { per_credential_per_hour: 100000, read_per_hour: null },
      reset: true,
    });
    expect(parseOrganizationLimits({ 'analytics-export': '100000000' }, invalid)).toEqual({ change: { analytics_export_per_hour: 100000000 }, reset: false });
    expect(parseOrganizationLimits({}, invalid)).toEqual({ change: {}, reset: false });
  });

  it('refuses anything but an integer from 1 to 100000000 or default', () => {
    for (const bad of ['0', '-1', '1.5', '1e5', 'abc', '', ' 5', '0x10', '007', '100000001', '9999999999', 'Default']) {
      expect(() => parseOrganizationLimits({ write: bad }, invalid), bad).toThrow(`--write must be an integer from 1 to 100000000, or default (got ${JSON.stringify(bad)})`);
    }
  });
});
