import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard, type AuthGuardAuthenticateOptions } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { DomainError } from '../../common/errors/domain-error.js';
import { routeDeclaration } from '../../common/reflection/route-declarations.js';
import { RequestLimits } from '../../rate-limits/request-limits.service.js';
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
    private readonly limits: RequestLimits,
  ) {
    super({ defaultStrategy: strategy.name });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (routeDeclaration(this.reflector, PUBLIC, context)) return true;
    try {
      return (await super.canActivate(context)) as boolean;
    } catch (error) {
      // Failed authentication is limited per source address, so that keys cannot be guessed at
      // speed: the 401 carries that limit's headers, and past it the answer is 429.
      if (error instanceof DomainError && error.status === 401) {
        const http = context.switchToHttp();
        await this.limits.authenticationFailed(http.getRequest<Request>(), http.getResponse<Response>());
      }
      throw error;
    }
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
