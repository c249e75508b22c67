import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/access.js';
import { canonicalJson, idempotencyScope, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';
import { storesAnswer } from './idempotency.guard.js';

const fire = { method: 'POST', path: '/v1/triggers/t1/fire', query: {}, body: { customer_id: 'c1', data: { a: 1, b: [1, 2] } } };

describe('requestFingerprint', () => {
  it('is the same for the same request whatever its key order, spacing and escapes', () => {
    const reordered = JSON.parse('{ "data": { "b": [1, 2.0], "a": 1 }, "customer_id": "\\u0063\\u0031" }') as unknown;
    expect(requestFingerprint({ ...fire, body: reordered })).toBe(requestFingerprint(fire));
    expect(requestFingerprint({ ...fire, method: 'post', path: '/v1/triggers/t1/fire/' })).toBe(requestFingerprint(fire));
    expect(requestFingerprint(fire)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when the body, the path, the method or the query differs', () => {
    const base = requestFingerprint(fire);
    expect(requestFingerprint({ ...fire, body: { ...fire.body, customer_id: 'c2' } })).not.toBe(base);
    expect(requestFingerprint({ ...fire, body: { customer_id: 'c1', data: { a: 1, b: [2, 1] } } })).not.toBe(base);
    expect(requestFingerprint({ ...fire, body: { customer_id: 'c1', data: { a: '1', b: [1, 2] } } })).not.toBe(base);
    expect(requestFingerprint({ ...fire, path: '/v1/triggers/t2/fire' })).not.toBe(base);
    expect(requestFingerprint({ ...fire, method: 'PUT' })).not.toBe(base);
    expect(requestFingerprint({ ...fire, query: { dry_run: 'true' } })).not.toBe(base);
  });

  it('tells no body, an empty object, null and a text body apart', () => {
    const of = (body: unknown) => requestFingerprint({ method: 'POST', path: '/v1/x', body });
    const all = [of(undefined), of({}), of(null), of('{}'), of('')];
    expect(new Set(all).size).toBe(all.length);
  });

  it('does not let the path and the body run into each other', () => {
    expect(requestFingerprint({ method: 'POST', path: '/v1/a', body: 'b' })).not.toBe(requestFingerprint({ method: 'POST', path: '/v1/ab', body: '' }));
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps array order and no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }, 3] })).toBe('{"a":[{"c":2,"d":1},3],"b":1}');
    expect(canonicalJson(undefined)).toBe('');
  });
});

describe('parseIdempotencyKey', () => {
  it('takes 1 to 255 printable ASCII characters', () => {
    expect(parseIdempotencyKey(undefined)).toEqual({});
    expect(parseIdempotencyKey('4f0c1a0e-9b7b-4c39-a1f2-6f1f0c3e2d11').key).toBe('4f0c1a0e-9b7b-4c39-a1f2-6f1f0c3e2d11');
    expect(parseIdempotencyKey(' ~!').key).toBe(' ~!');
    expect(parseIdempotencyKey('k'.repeat(255)).key).toHaveLength(255);
  });

  it('refuses an empty, over-long or non-ASCII key', () => {
    for (const value of ['', 'k'.repeat(256), 'café', 'a\tb', 'a\u0000b']) expect(parseIdempotencyKey(value).problem).toMatch(/printable ASCII/);
  });
});

describe('idempotencyScope', () => {
  const apiKey: Principal = { credentialType: 'api_key', credentialId: 'k1', name: 'n', organizationId: 'o1' };

  it('is per organization and credential, the key hashed', () => {
    const scope = idempotencyScope(apiKey, 'my:key');
    expect(scope.slice(0, 3)).toEqual(['o1', 'api_key', 'k1']);
    expect(scope[3]).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyScope({ ...apiKey, credentialId: 'k2' }, 'my:key')).not.toEqual(scope);
  });

  it('keeps an OAuth client\'s keys per authorizing user', () => {
    const oauth: Principal = { credentialType: 'oauth', credentialId: 'client', name: 'n', organizationId: 'o1', userId: 'u1' };
    expect(idempotencyScope(oauth, 'k')).not.toEqual(idempotencyScope({ ...oauth, userId: 'u2' }, 'k'));
  });
});

describe('storesAnswer', () => {
  it('stores 2xx and the handler\'s 4xx; not refusals of the content (400, 422), 429 or 5xx', () => {
    for (const status of [200, 201, 202, 404, 409]) expect(storesAnswer(status)).toBe(true);
    for (const status of [400, 422, 429, 500, 503]) expect(storesAnswer(status)).toBe(false);
  });
});
