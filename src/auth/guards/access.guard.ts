import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { levelAllows, requiredLevel, scopeFor, scopesAllow } from '../access.js';
import { InsufficientPermissionsError, ScopeInsufficientError } from '../auth.errors.js';
import { routeDeclaration } from '../../common/reflection/route-declarations.js';
import { ACCESS, PUBLIC } from '../decorators/access.decorators.js';

/**
 * Checks the route's declared access against the caller: the permission level for API keys,
 * the scopes for OAuth tokens and JWTs. A route that declares nothing is refused (fail closed).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (routeDeclaration(this.reflector, PUBLIC, context)) return true;
    const requirement = routeDeclaration(this.reflector, ACCESS, context);
    const principal = context.switchToHttp().getRequest<Request>().principal;
    if (!principal || !requirement) throw new InsufficientPermissionsError();
    if (requirement === 'any') return true;

    if (principal.credentialType === 'api_key') {
      if (!principal.permissionLevel || !levelAllows(principal.permissionLevel, requirement)) {
        throw new InsufficientPermissionsError(requiredLevel(requirement));
      }
      return true;
    }
    if (!scopesAllow(principal.scopes ?? [], requirement)) throw new ScopeInsufficientError(scopeFor(requirement));
    return true;
  }
}
