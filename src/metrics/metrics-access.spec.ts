import { describe, expect, it } from 'vitest';
import { isLoopback, metricsRefusal } from './metrics-access.js';
import { statusClass } from './metric-factory.js';

const TOKEN = 't'.repeat(24);

describe('metricsRefusal', () => {
  it('with a token: 401 MISSING_AUTHENTICATION without a bearer credential, INVALID_TOKEN with another, none with it (from any address)', () => {
    const policy = { token: TOKEN, production: true };
    expect(metricsRefusal(policy, undefined, '127.0.0.1')?.toBody().code).toBe('MISSING_AUTHENTICATION');
    expect(metricsRefusal(policy, `Basic ${TOKEN}`, '127.0.0.1')?.status).toBe(401);
    expect(metricsRefusal(policy, `Bearer ${TOKEN}x`, '127.0.0.1')?.toBody().code).toBe('INVALID_TOKEN');
    expect(metricsRefusal(policy, `Bearer ${TOKEN.slice(1)}`, '127.0.0.1')?.status).toBe(401);
    expect(metricsRefusal(policy, `Bearer ${TOKEN}`, '203.0.113.9')).toBeNull();
    expect(metricsRefusal(policy, `bearer ${TOKEN}`, undefined)).toBeNull();
  });

  it('without a token: 403 METRICS_FORBIDDEN from a non-loopback client in production only', () => {
    expect(metricsRefusal({ production: true }, undefined, '203.0.113.9')?.toBody()).toMatchObject({ code: 'METRICS_FORBIDDEN' });
    expect(metricsRefusal({ production: true }, undefined, '203.0.113.9')?.status).toBe(403);
    expect(metricsRefusal({ production: true }, undefined, undefined)?.status).toBe(403);
    expect(metricsRefusal({ production: true }, undefined, '127.0.0.1')).toBeNull();
    expect(metricsRefusal({ production: true }, undefined, '::ffff:127.0.0.1')).toBeNull();
    expect(metricsRefusal({ production: true }, undefined, '::1')).toBeNull();
    expect(metricsRefusal({ production: false }, undefined, '203.0.113.9')).toBeNull();
  });

  it('knows loopback addresses', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopback(a), a).toBe(true);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '::2', 'fe80::1', '', 'localhost', '1127.0.0.1']) expect(isLoopback(a), a).toBe(false);
  });
});

describe('statusClass', () => {
  it('classes answers by hundreds, and their absence as timeout or network', () => {
    expect([200, 204, 301, 404, 429, 500, 503].map((s) => statusClass(s))).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx']);
    expect(statusClass(null)).toBe('network');
    expect(statusClass(null, true)).toBe('timeout');
    expect(statusClass(undefined, true)).toBe('timeout');
  });
});
