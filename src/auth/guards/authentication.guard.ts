import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard, type AuthGuardAuthenticateOptions } from '@nestjs/passport';
import type { Principal } from '../access.js';
import { MissingAuthenticationError } from '../auth.errors.js';
import { PUBLIC } from '../decorators/access.decorators.js';
import { BearerStrategy } from './bearer.strategy.js';

declare module 'express' {
  interface Request {
    principal?: Principal;
  }
}

/**
 * Deny by default: every route needs a valid bearer credential unless it is @Public().
 * Passport's AuthGuard for the bearer strategy, under this app's name for it (see BearerStrategy).
 * The principal lands on `req.principal`.
 */
@Injectable()
export class AuthenticationGuard extends AuthGuard() {
  constructor(
    private readonly reflector: Reflector,
    strategy: BearerStrategy,
  ) {
    super({ defaultStrategy: strategy.name });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    return (await super.canActivate(context)) as boolean;
  }

  /** Stateless: no session; the property is set here rather than through PassportModule's options. */
  override getAuthenticateOptions(): AuthGuardAuthenticateOptions {
    return { property: 'principal', session: false };
  }

  /** The strategy's DomainError (a bad credential) as is; no credential at all is MISSING_AUTHENTICATION. */
  override handleRequest<T = Principal>(err: unknown, principal: T | false | null): T {
    if (err) throw err;
    if (!principal) throw new MissingAuthenticationError();
    return principal;
  }
}
