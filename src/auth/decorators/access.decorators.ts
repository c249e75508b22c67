import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiErrors } from '../../common/http/api-docs.js';
import type { AccessRequirement, Action, Principal, Resource } from '../access.js';

/** Route metadata read by the guards; one declaration gives both the API-key level and the token scope. */
export const ACCESS = Reflector.createDecorator<AccessRequirement | 'any'>();
export const PUBLIC = Reflector.createDecorator<true>();

export function RequireAccess(resource: Resource, action: Action) {
  return applyDecorators(ACCESS({ resource, action }), ApiBearerAuth(), ApiErrors(401, 403));
}

/** Any valid credential, whatever its level or scopes (e.g. GET /v1/me). */
export function AnyCredential() {
  return applyDecorators(ACCESS('any'), ApiBearerAuth(), ApiErrors(401));
}

/** No credential: health checks, the sample pet endpoints, inbound webhooks, the OAuth pages. */
export function Public() {
  return PUBLIC(true);
}

export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<{ principal?: Principal }>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
  return principal;
});
