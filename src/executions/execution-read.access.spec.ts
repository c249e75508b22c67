import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { describe, expect, it } from 'vitest';
import type { PermissionLevel, Principal } from '../auth/access.js';
import { ACCESS, PUBLIC } from '../auth/decorators/access.decorators.js';
import { AccessGuard } from '../auth/guards/access.guard.js';
import { DomainError } from '../common/errors/domain-error.js';
import { TriggerExecutionsController } from '../triggers/trigger-executions.controller.js';
import { CustomersController } from '../customers/customers.controller.js';
import { WorkflowExecutionsController } from './workflow-executions.controller.js';

/** The read-side routes: every one needs executions:read, and nothing more. */
const CONTROLLERS: [Type<unknown>, string[]][] = [
  [WorkflowExecutionsController, ['list', 'get', 'getMetrics']],
  [TriggerExecutionsController, ['list', 'get', 'getMetrics']],
  [CustomersController, ['list', 'get', 'messages']],
];

/**
 * The operations on one execution (retry, cancel) and on a customer's conversation (handoff, agent
 * messages): executions:write, a read_write API key.
 */
const WRITE_ROUTES: [Type<unknown>, string[]][] = [
  [WorkflowExecutionsController, ['retry', 'cancel']],
  [CustomersController, ['startHandoff', 'endHandoff', 'sendMessage']],
];

const reflector = new Reflector();
const guard = new AccessGuard(reflector);

function routeHandlers(controller: Type<unknown>): string[] {
  const proto = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(proto).filter((name) => name !== 'constructor' && Reflect.getMetadata(PATH_METADATA, proto[name] as object) !== undefined);
}

function check(controller: Type<unknown>, method: string, principal: Principal): string {
  const handler = (controller.prototype as Record<string, Function>)[method];
  const context = new ExecutionContextHost([{ headers: {}, principal }, {}, () => undefined], controller, handler);
  context.setType('http');
  try {
    return guard.canActivate(context) ? 'allowed' : 'returned false';
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return `${error.status} ${error.code}`;
  }
}

const apiKey = (permissionLevel: PermissionLevel): Principal => ({ credentialType: 'api_key', credentialId: 'k', name: 'key', organizationId: 'o', permissionLevel });
const token = (scopes: string[]): Principal => ({ credentialType: 'jwt', credentialId: 't', name: 'client', organizationId: 'o', scopes });

describe('execution read routes: access', () => {
  it('covers every route handler of the three controllers', () => {
    for (const [controller, methods] of CONTROLLERS) {
      const writes = WRITE_ROUTES.find(([c]) => c === controller)?.[1] ?? [];
      expect(routeHandlers(controller).sort()).toEqual([...methods, ...writes].sort());
    }
  });

  it('declares executions:read on every route, and none is public', () => {
    for (const [controller, methods] of CONTROLLERS) {
      for (const method of methods) {
        const targets = [(controller.prototype as Record<string, Function>)[method], controller];
        expect(reflector.getAllAndOverride(ACCESS, targets), `${controller.name}.${method}`).toEqual({ resource: 'executions', action: 'read' });
        expect(reflector.getAllAndOverride(PUBLIC, targets), `${controller.name}.${method}`).toBeUndefined();
      }
    }
  });

  it('lets every API key level through and tokens only with executions:read', () => {
    for (const [controller, methods] of CONTROLLERS) {
      for (const method of methods) {
        const where = `${controller.name}.${method}`;
        for (const level of ['read_only', 'read_write', 'full_access'] as const) expect(check(controller, method, apiKey(level)), where).toBe('allowed');
        expect(check(controller, method, token(['executions:read'])), where).toBe('allowed');
        // Neither the parent resource's scope nor another action stands in for it.
        expect(check(controller, method, token(['workflows:read', 'triggers:read', 'analytics:read', 'executions:write', 'executions:delete'])), where).toBe(
          '403 SCOPE_INSUFFICIENT',
        );
        expect(check(controller, method, token([])), where).toBe('403 SCOPE_INSUFFICIENT');
      }
    }
  });
});

describe('execution operation routes: access', () => {
  it('declare executions:write: a read_only key or an executions:read token is refused', () => {
    for (const [controller, methods] of WRITE_ROUTES) {
      for (const method of methods) {
        const where = `${controller.name}.${method}`;
        const targets = [(controller.prototype as Record<string, Function>)[method], controller];
        expect(reflector.getAllAndOverride(ACCESS, targets), where).toEqual({ resource: 'executions', action: 'write' });
        expect(check(controller, method, apiKey('read_only')), where).toBe('403 INSUFFICIENT_PERMISSIONS');
        for (const level of ['read_write', 'full_access'] as const) expect(check(controller, method, apiKey(level)), where).toBe('allowed');
        expect(check(controller, method, token(['executions:write'])), where).toBe('allowed');
        expect(check(controller, method, token(['executions:read', 'workflows:write'])), where).toBe('403 SCOPE_INSUFFICIENT');
      }
    }
  });
});
