import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import passport from 'passport';
import { Strategy } from 'passport-http-bearer';
import { afterAll, describe, expect, it } from 'vitest';
import type { RequestLimits } from '../../rate-limits/request-limits.service.js';
import type { Principal } from '../access.js';
import { InvalidApiKeyError } from '../auth.errors.js';
import { Public, RequireAccess } from '../decorators/access.decorators.js';
import { AuthenticationGuard } from './authentication.guard.js';
import type { BearerStrategy } from './bearer.strategy.js';

class Routes {
  @RequireAccess('workflows', 'read') read() {}
  @Public() health() {}
}

const principal = { organizationId: 'org', credentialType: 'api_key', credentialId: 'k' } as unknown as Principal;
const name = `test-bearer:${randomUUID()}`;
const verified: string[] = [];
passport.use(
  name,
  new Strategy((token, done) => {
    verified.push(token);
    if (token === 'good') done(null, principal, { scope: 'all' });
    else if (token === 'broken') done(new Error('database down'));
    else done(new InvalidApiKeyError());
  }),
);
afterAll(() => passport.unuse(name));

const failures: string[] = [];
const limits = { authenticationFailed: () => Promise.resolve(void failures.push('counted')) } as unknown as RequestLimits;
const guard = new AuthenticationGuard(new Reflector(), { name } as BearerStrategy, limits);

async function authenticate(method: keyof Routes, authorization?: string) {
  const req: Record<string, unknown> = { headers: authorization ? { authorization } : {} };
  const context = new ExecutionContextHost([req, {}, () => undefined], Routes, Routes.prototype[method]);
  context.setType('http');
  try {
    return { allowed: await guard.canActivate(context), req };
  } catch (error) {
    return { error: (error as { code?: string; message: string }).code ?? (error as Error).message, req };
  }
}

describe('AuthenticationGuard', () => {
  it("runs the strategy through passport.authenticate: the principal on req.principal, the strategy's info on req.authInfo", async () => {
    const { allowed, req } = await authenticate('read', 'Bearer good');
    expect(allowed).toBe(true);
    expect(req.principal).toBe(principal);
    expect(req.authInfo).toEqual({ scope: 'all' });
    // Passport's own middleware ran (it gives the request its login helpers).
    expect(typeof req.logIn).toBe('function');
    expect(verified.at(-1)).toBe('good');
  });

  it('no credential: MISSING_AUTHENTICATION; a bad one: the strategy\'s error; both counted as failed authentications', async () => {
    failures.length = 0;
    expect(await authenticate('read')).toMatchObject({ error: 'MISSING_AUTHENTICATION' });
    expect(await authenticate('read', 'Bearer nope')).toMatchObject({ error: 'INVALID_API_KEY' });
    expect(failures).toEqual(['counted', 'counted']);
  });

  it('an internal error of the strategy passes through, uncounted', async () => {
    failures.length = 0;
    expect(await authenticate('read', 'Bearer broken')).toMatchObject({ error: 'database down' });
    expect(failures).toEqual([]);
  });

  it('lets @Public() routes through without asking the strategy', async () => {
    const before = verified.length;
    const { allowed, req } = await authenticate('health', 'Bearer good');
    expect(allowed).toBe(true);
    expect(req.principal).toBeUndefined();
    expect(verified.length).toBe(before);
  });

  it('serves concurrent requests each with its own outcome', async () => {
    const outcomes = await Promise.all(['good', 'nope', 'good', undefined].map((t) => authenticate('read', t && `Bearer ${t}`)));
    expect(outcomes.map((o) => o.allowed ?? o.error)).toEqual([true, 'INVALID_API_KEY', true, 'MISSING_AUTHENTICATION']);
  });
});
