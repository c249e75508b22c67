import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import passport from 'passport';
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
 * What AuthGuard would hand passport.authenticate: its options ({ session: false }, ours and
 * @nestjs/passport's default) without `defaultStrategy` and `property`. Stateless: no session.
 */
const AUTHENTICATE_OPTIONS = { session: false };

/**
 * Deny by default: every route needs a valid bearer credential unless it is @Public().
 * Passport's AuthGuard for the bearer strategy, under this app's name for it (see BearerStrategy).
 * The principal lands on `req.principal`.
 */
@Injectable()
export class AuthenticationGuard extends AuthGuard() {
  private readonly strategyName: string;

  constructor(
    private readonly reflector: Reflector,
    strategy: BearerStrategy,
    private readonly limits: RequestLimits,
  ) {
    super({ defaultStrategy: strategy.name, property: 'principal' });
    this.strategyName = strategy.name;
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (routeDeclaration(this.reflector, PUBLIC, context)) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    try {
      req.principal = await this.authenticate(req, http.getResponse<Response>());
      return true;
    } catch (error) {
      // Failed authentication is limited per source address, so that keys cannot be guessed at
      // speed: the 401 carries that limit's headers, and past it the answer is 429.
      if (error instanceof DomainError && error.status === 401) await this.limits.authenticationFailed(req, http.getResponse<Response>());
      throw error;
    }
  }

  /**
   * AuthGuard's canActivate, step for step — passport.authenticate with the strategy, its outcome
   * through handleRequest, `req.authInfo` set — minus what it rebuilt on every request: three
   * options objects spread into one (V8 makes a new hidden class for each such copy), an awaited
   * getAuthenticateOptions, a context closure and the options' copy without `property`.
   */
  private authenticate(req: Request, res: Response): Promise<Principal> {
    return new Promise<Principal>((resolve, reject) => {
      passport.authenticate(this.strategyName, AUTHENTICATE_OPTIONS, (err: unknown, principal: Principal | false, info: unknown) => {
        try {
          req.authInfo = info as Express.AuthInfo;
          resolve(this.handleRequest(err, principal));
        } catch (error) {
          reject(error);
        }
      })(req, res, (err?: unknown) => (err ? reject(err) : resolve(undefined as unknown as Principal)));
    });
  }

  /** The strategy's DomainError (a bad credential) as is; no credential at all is MISSING_AUTHENTICATION. */
  override handleRequest<T = Principal>(err: unknown, principal: T | false | null): T {
    if (err) throw err;
    if (!principal) throw new MissingAuthenticationError();
    return principal;
  }
}
