import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { Principal } from '../access.js';
import { MissingAuthenticationError } from '../auth.errors.js';
import { CREDENTIAL_RESOLVERS, type CredentialResolver } from '../credentials/credential-resolver.js';
import { PUBLIC } from '../decorators/access.decorators.js';

declare module 'express' {
  interface Request {
    principal?: Principal;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Deny by default: every route needs a valid bearer credential unless it is @Public(). */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CREDENTIAL_RESOLVERS) private readonly resolvers: CredentialResolver[],
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride(PUBLIC, [context.getHandler(), context.getClass()])) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const header = req.headers.authorization;
    const token = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
    if (!token) throw new MissingAuthenticationError();

    const resolver = this.resolvers.find((r) => r.accepts(token));
    if (!resolver) throw new MissingAuthenticationError();
    const principal = await resolver.resolve(token);
    if (!principal) throw resolver.invalidError();
    req.principal = principal;
    return true;
  }
}
