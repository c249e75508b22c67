import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { CidrList } from './address-classifier.js';
import { pinnedLookup, resolveTarget, TargetNotAllowedError, TargetUnresolvedError, type HostResolver } from './target-resolver.js';

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
