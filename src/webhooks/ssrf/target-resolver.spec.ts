import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { CidrList } from './address-classifier.js';
import { CheckedTargetCache, pinnedLookup, resolveTarget, TargetNotAllowedError, TargetUnresolvedError, type HostResolver } from './target-resolver.js';

const strict = { allowPrivate: false, allowed: new CidrList([]) };
const stub = (answers: Record<string, LookupAddress[]>): HostResolver => async (host) => {
  const found = answers[host];
  if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return found;
};

// The stub resolver stands in for DNS: no query leaves the process.
describe('resolveTarget', () => {
  it('refuses a name resolved to loopback', async () => {
    await expect(resolveTarget('evil.test', strict, stub({ 'evil.test': [{ address: '127.0.0.1', family: 4 }] }))).rejects.toBeInstanceOf(TargetNotAllowedError);
  });
  it('refuses a name with one internal address among public ones', async () => {
    const resolver = stub({ 'mixed.test': [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.1', family: 4 }] });
    await expect(resolveTarget('mixed.test', strict, resolver)).rejects.toBeInstanceOf(TargetNotAllowedError);
  });
  it('refuses IP literals without asking the resolver', async () => {
    const never: HostResolver = () => Promise.reject(new Error('must not be called'));
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:7f00:1]', '169.254.169.254']) {
      await expect(resolveTarget(host, strict, never)).rejects.toBeInstanceOf(TargetNotAllowedError);
    }
  });
  it('returns the checked addresses of a public name', async () => {
    const addresses = [{ address: '93.184.215.14', family: 4 }];
    await expect(resolveTarget('ok.test', strict, stub({ 'ok.test': addresses }))).resolves.toEqual(addresses);
  });
  it('allows private addresses when configured, but never outside the allowed CIDRs', async () => {
    const open = { allowPrivate: true, allowed: new CidrList(['127.0.0.0/8']) };
    await expect(resolveTarget('127.0.0.1', open)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(resolveTarget('10.0.0.1', open)).rejects.toBeInstanceOf(TargetNotAllowedError);
  });
  it('fails names that do not resolve, and names that do not answer in time', async () => {
    await expect(resolveTarget('missing.test', strict, stub({}))).rejects.toBeInstanceOf(TargetUnresolvedError);
    const hanging: HostResolver = () => new Promise(() => undefined);
    await expect(resolveTarget('slow.test', strict, hanging, 50)).rejects.toBeInstanceOf(TargetUnresolvedError);
  });
});

describe('pinnedLookup', () => {
  it('answers only the checked addresses, in both callback forms', async () => {
    const lookup = pinnedLookup([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]) as unknown as (h: string, o: object, cb: (...a: unknown[]) => void) => void;
    const all = await new Promise<unknown[]>((resolve) => lookup('anything', { all: true }, (...args) => resolve(args)));
    expect(all).toEqual([null, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]]);
    const one = await new Promise<unknown[]>((resolve) => lookup('anything', { family: 6 }, (...args) => resolve(args)));
    expect(one).toEqual([null, '::1', 6]);
  });
});

describe('CheckedTargetCache', () => {
  it('reuses a checked answer within its TTL, so a rebinding DNS answer is not used until the entry expires and is checked again', async () => {
    let answer: LookupAddress[] = [{ address: '93.184.215.14', family: 4 }];
    let lookups = 0;
    const resolver: HostResolver = async () => {
      lookups++;
      return answer;
    };
    let now = 1_000_000;
    const realNow = Date.now;
    Date.now = () => now;
    try {
      const cache = new CheckedTargetCache(5000);
      const check = (host: string) => resolveTarget(host, strict, resolver);
      await expect(cache.resolve('rebind.test', check)).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
      answer = [{ address: '127.0.0.1', family: 4 }];
      now += 4000;
      // Still the checked public address: connections are pinned to it, never to the new answer.
      await expect(cache.resolve('rebind.test', check)).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
      expect(lookups).toBe(1);
      now += 2000;
      await expect(cache.resolve('rebind.test', check)).rejects.toBeInstanceOf(TargetNotAllowedError);
      expect(lookups).toBe(2);
      // A refusal is not kept: asked again next time.
      answer = [{ address: '93.184.215.15', family: 4 }];
      await expect(cache.resolve('rebind.test', check)).resolves.toEqual([{ address: '93.184.215.15', family: 4 }]);
      expect(lookups).toBe(3);
    } finally {
      Date.now = realNow;
    }
  });
  it('shares one lookup between concurrent misses, keeps allowed IP literals but not refused ones, and forgets everything on clear', async () => {
    let lookups = 0;
    const resolver: HostResolver = async () => {
      lookups++;
      return [{ address: '93.184.215.14', family: 4 }];
    };
    const cache = new CheckedTargetCache(5000);
    const check = (host: string) => resolveTarget(host, strict, resolver);
    await Promise.all([cache.resolve('a.test', check), cache.resolve('a.test', check), cache.resolve('a.test', check)]);
    expect(lookups).toBe(1);
    let literalChecks = 0;
    const counting = (host: string) => {
      literalChecks++;
      return resolveTarget(host, strict, resolver);
    };
    await cache.resolve('93.184.215.14', counting);
    await expect(cache.resolve('[::1]', counting)).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(cache.resolve('[::1]', counting)).rejects.toBeInstanceOf(TargetNotAllowedError);
    await cache.resolve('93.184.215.14', counting);
    expect(literalChecks).toBe(3);
    cache.clear();
    await cache.resolve('a.test', check);
    expect(lookups).toBe(2);
  });
});
