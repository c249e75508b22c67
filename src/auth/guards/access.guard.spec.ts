import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Action, PermissionLevel, Principal, Resource } from '../access.js';
import { AnyCredential, Public, RequireAccess } from '../decorators/access.decorators.js';
import { AccessGuard } from './access.guard.js';

class DeclaredRoutes {
  @RequireAccess('workflows', 'read') workflowsRead() {}
  @RequireAccess('workflows', 'write') workflowsWrite() {}
  @RequireAccess('workflows', 'delete') workflowsDelete() {}
  @RequireAccess('triggers', 'read') triggersRead() {}
  @RequireAccess('credentials', 'read') credentialsRead() {}
  @RequireAccess('credentials', 'write') credentialsWrite() {}
  @RequireAccess('credentials', 'delete') credentialsDelete() {}
  @AnyCredential() me() {}
  @Public() health() {}
  undeclared() {}
}

@Public()
class PublicRoutes {
  pet() {}
}

@RequireAccess('analytics', 'read')
class ClassLevelRoutes {
  inherited() {}
  @RequireAccess('analytics', 'delete') overridden() {}
}

const guard = new AccessGuard(new Reflector());

function contextFor(controller: Type<unknown>, method: string, principal?: Principal): ExecutionContextHost {
  const handler = (controller.prototype as Record<string, Function>)[method];
  const request = { headers: {}, principal };
  const context = new ExecutionContextHost([request, {}, () => undefined], controller, handler);
  context.setType('http');
  return context;
}

/** The guard's answer: 'allowed', or the refusal's error code and status. */
function check(controller: Type<unknown>, method: string, principal?: Principal): 'allowed' | string {
  try {
    return guard.canActivate(contextFor(controller, method, principal)) === true ? 'allowed' : 'returned false';
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return `${error.status} ${error.code}`;
  }
}

const apiKey = (permissionLevel: PermissionLevel): Principal => ({
  credentialType: 'api_key',
  credentialId: 'key-1',
  name: `${permissionLevel} key`,
  organizationId: 'org-1',
  permissionLevel,
});

const token = (scopes: string[], credentialType: 'oauth' | 'jwt' = 'oauth'): Principal => ({
  credentialType,
  credentialId: 'token-1',
  name: 'client',
  organizationId: 'org-1',
  scopes,
});

const FORBIDDEN = '403 INSUFFICIENT_PERMISSIONS';
const SCOPE = '403 SCOPE_INSUFFICIENT';

describe('AccessGuard', () => {
  describe('API key levels', () => {
    const routes: [string, Resource, Action][] = [
      ['workflowsRead', 'workflows', 'read'],
      ['workflowsWrite', 'workflows', 'write'],
      ['workflowsDelete', 'workflows', 'delete'],
      ['credentialsRead', 'credentials', 'read'],
      ['credentialsWrite', 'credentials', 'write'],
      ['credentialsDelete', 'credentials', 'delete'],
    ];
    // Expected answer per level, in the order of `routes`.
    const expected: Record<PermissionLevel, string[]> = {
      read_only: ['allowed', FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN],
      read_write: ['allowed', 'allowed', FORBIDDEN, FORBIDDEN, FORBIDDEN, FORBIDDEN],
      full_access: ['allowed', 'allowed', 'allowed', 'allowed', 'allowed', 'allowed'],
    };

    for (const level of ['read_only', 'read_write', 'full_access'] as const) {
      it(`${level}: read/write/delete on a resource, and credential management only with full_access`, () => {
        const answers = routes.map(([method]) => check(DeclaredRoutes, method, apiKey(level)));
        expect(answers).toEqual(expected[level]);
      });
    }

    it('ignores scopes on an API key: the level decides', () => {
      const principal: Principal = { ...apiKey('read_only'), scopes: ['workflows:write', 'workflows:delete'] };
      expect(check(DeclaredRoutes, 'workflowsWrite', principal)).toBe(FORBIDDEN);
      expect(check(DeclaredRoutes, 'workflowsDelete', principal)).toBe(FORBIDDEN);
    });

    it('refuses an API key without a level', () => {
      const principal: Principal = { ...apiKey('read_only'), permissionLevel: undefined };
      expect(check(DeclaredRoutes, 'workflowsRead', principal)).toBe(FORBIDDEN);
    });
  });

  describe('token scopes (OAuth and JWT)', () => {
    for (const type of ['oauth', 'jwt'] as const) {
      it(`${type}: allows exactly the routes whose scope the token carries`, () => {
        const principal = token(['workflows:read', 'workflows:write'], type);
        expect(check(DeclaredRoutes, 'workflowsRead', principal)).toBe('allowed');
        expect(check(DeclaredRoutes, 'workflowsWrite', principal)).toBe('allowed');
        expect(check(DeclaredRoutes, 'workflowsDelete', principal)).toBe(SCOPE);
        // Another resource's route is not covered by workflows scopes.
        expect(check(DeclaredRoutes, 'triggersRead', principal)).toBe(SCOPE);
      });
    }

    it('answers SCOPE_INSUFFICIENT for a token with no scopes or without a scopes list', () => {
      expect(check(DeclaredRoutes, 'workflowsRead', token([]))).toBe(SCOPE);
      expect(check(DeclaredRoutes, 'workflowsRead', { ...token([]), scopes: undefined })).toBe(SCOPE);
    });

    it('does not let one action imply another, or a prefix pass for a scope', () => {
      expect(check(DeclaredRoutes, 'workflowsRead', token(['workflows:delete']))).toBe(SCOPE);
      expect(check(DeclaredRoutes, 'workflowsRead', token(['workflows', 'workflows:*', 'workflows:read:extra']))).toBe(SCOPE);
    });

    it('never grants credential management through a scope, whatever the token carries', () => {
      const everything = token([
        'workflows:read', 'workflows:write', 'workflows:delete',
        'triggers:read', 'triggers:write', 'triggers:delete',
        'credentials:read', 'credentials:write', 'credentials:delete', 'undefined',
      ]);
      for (const method of ['credentialsRead', 'credentialsWrite', 'credentialsDelete']) {
        expect(check(DeclaredRoutes, method, everything)).toBe(SCOPE);
        expect(check(DeclaredRoutes, method, token(['credentials:read', 'credentials:write', 'credentials:delete'], 'jwt'))).toBe(SCOPE);
      }
    });

    it('checks scopes, not a level, for tokens', () => {
      const principal: Principal = { ...token([]), permissionLevel: 'full_access' };
      expect(check(DeclaredRoutes, 'workflowsRead', principal)).toBe(SCOPE);
    });
  });

  describe('declarations', () => {
    it('refuses a route that declares nothing, even to a full access key or an all-scopes token', () => {
      expect(check(DeclaredRoutes, 'undeclared', apiKey('full_access'))).toBe(FORBIDDEN);
      expect(check(DeclaredRoutes, 'undeclared', token(['workflows:read', 'workflows:write', 'workflows:delete']))).toBe(FORBIDDEN);
      expect(check(DeclaredRoutes, 'undeclared')).toBe(FORBIDDEN);
    });

    it('allows a @Public() route, on the method or the class, without a principal', () => {
      expect(check(DeclaredRoutes, 'health')).toBe('allowed');
      expect(check(PublicRoutes, 'pet')).toBe('allowed');
      expect(check(PublicRoutes, 'pet', apiKey('read_only'))).toBe('allowed');
    });

    it('refuses a declared route when no principal was authenticated', () => {
      expect(check(DeclaredRoutes, 'workflowsRead')).toBe(FORBIDDEN);
      expect(check(DeclaredRoutes, 'me')).toBe(FORBIDDEN);
    });

    it('lets any credential through @AnyCredential(), whatever its level or scopes', () => {
      expect(check(DeclaredRoutes, 'me', apiKey('read_only'))).toBe('allowed');
      expect(check(DeclaredRoutes, 'me', token([]))).toBe('allowed');
      expect(check(DeclaredRoutes, 'me', token([], 'jwt'))).toBe('allowed');
    });

    it('applies a class-level declaration to its methods, with a method-level one taking precedence', () => {
      expect(check(ClassLevelRoutes, 'inherited', apiKey('read_only'))).toBe('allowed');
      expect(check(ClassLevelRoutes, 'inherited', token(['analytics:read']))).toBe('allowed');
      expect(check(ClassLevelRoutes, 'inherited', token(['workflows:read']))).toBe(SCOPE);
      expect(check(ClassLevelRoutes, 'overridden', apiKey('read_write'))).toBe(FORBIDDEN);
      expect(check(ClassLevelRoutes, 'overridden', apiKey('full_access'))).toBe('allowed');
      expect(check(ClassLevelRoutes, 'overridden', token(['analytics:read']))).toBe(SCOPE);
      expect(check(ClassLevelRoutes, 'overridden', token(['analytics:delete']))).toBe('allowed');
    });
  });
});
