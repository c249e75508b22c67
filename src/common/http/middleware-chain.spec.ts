import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { middlewareChain } from './middleware-chain.js';

const req = {} as Request;
const res = {} as Response;

function run(chain: RequestHandler): Promise<unknown[]> {
  return new Promise((resolve) => {
    void chain(req, res, ((...args: unknown[]) => resolve(args)) as NextFunction);
  });
}

describe('middlewareChain', () => {
  it('runs the middlewares in order, synchronous or not, then passes on', async () => {
    const seen: string[] = [];
    const chain = middlewareChain([
      (_q, _s, next) => { seen.push('a'); next(); },
      (_q, _s, next) => { seen.push('b'); setImmediate(next); },
      (_q, _s, next) => { seen.push('c'); next('route'); },
    ]);
    expect(await run(chain)).toEqual([]);
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('skips the rest after next(error), a throw or a rejected promise, handing on the error', async () => {
    const boom = new Error('boom');
    let reached = false;
    const rest: RequestHandler = (_q, _s, next) => { reached = true; next(); };
    expect(await run(middlewareChain([(_q, _s, next) => next(boom), rest]))).toEqual([boom]);
    expect(await run(middlewareChain([() => { throw boom; }, rest]))).toEqual([boom]);
    expect(await run(middlewareChain([(() => Promise.reject(boom)) as RequestHandler, rest]))).toEqual([boom]);
    expect(reached).toBe(false);
  });

  it('passes on at once when empty', async () => {
    expect(await run(middlewareChain([]))).toEqual([]);
  });
});
