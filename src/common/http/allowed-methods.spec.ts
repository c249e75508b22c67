import { describe, expect, it } from 'vitest';
import { allowedMethods, type RouterLike } from './allowed-methods.js';

const route = (pattern: RegExp, methods: Record<string, boolean>) => ({ route: { methods }, match: (path: string) => pattern.test(path) });

const router: RouterLike = {
  stack: [
    { match: () => true }, // a middleware layer: no route
    route(/^\/v1\/workflows$/, { get: true }),
    route(/^\/v1\/workflows$/, { post: true }),
    route(/^\/v1\/workflows\/[^/]+$/, { get: true, put: true, delete: true }),
    route(/^\/pet$/, { post: true, put: true }),
    route(/^\/v1\/hooks\/[^/]+$/, { _all: true }),
  ],
};

describe('allowedMethods', () => {
  it('unites the methods of every route matching the path, GET implying HEAD', () => {
    expect(allowedMethods(router, '/v1/workflows')).toEqual(['GET', 'HEAD', 'POST']);
    expect(allowedMethods(router, '/v1/workflows/1')).toEqual(['DELETE', 'GET', 'HEAD', 'PUT']);
    expect(allowedMethods(router, '/pet')).toEqual(['POST', 'PUT']);
  });

  it('is empty for a path no route has (a 404), and without a router', () => {
    expect(allowedMethods(router, '/nothing')).toEqual([]);
    expect(allowedMethods(router, '/v1/hooks/x')).toEqual([]);
    expect(allowedMethods(undefined, '/pet')).toEqual([]);
  });
});
