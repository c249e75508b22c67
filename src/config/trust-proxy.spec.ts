import { describe, expect, it } from 'vitest';
import { AppConfig } from './app-config.js';
import { ConfigError } from './env.schema.js';
import { parseTrustProxy } from './trust-proxy.js';

describe('parseTrustProxy', () => {
  it('is off when unset, empty, false or 0', () => {
    for (const value of [undefined, '', ' ', 'false', 'FALSE', '0']) expect(parseTrustProxy(value)).toBe(false);
  });

  it('takes a hop count, a list of addresses and CIDRs, and the named ranges', () => {
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('10')).toBe(10);
    expect(parseTrustProxy('loopback')).toEqual(['loopback']);
    expect(parseTrustProxy('10.0.0.0/8, 192.168.1.7 ,fd00::/8,::1,uniquelocal,linklocal')).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1', 'uniquelocal', 'linklocal']);
  });

  it.each(['true', '11', '-1', '1.5', 'loopbak', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/1', 'proxy.example.com', '10.0.0.0/8,', '*'])('refuses %s', (value) => {
    expect(parseTrustProxy(value)).toEqual({ error: expect.any(String) });
  });
});

describe('TRUST_PROXY at start', () => {
  it('stops start-up naming the variable', () => {
    expect(() => AppConfig.fromEnv({}, { TRUST_PROXY: 'everyone' })).toThrow(ConfigError);
    expect(() => AppConfig.fromEnv({}, { TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
  });

  it('is off by default', () => {
    expect(AppConfig.fromEnv({}, {}).trustProxy).toBe(false);
    expect(AppConfig.fromEnv({}, { TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });
});
