import 'reflect-metadata';
import { Controller, Get, Module, Post, RequestMethod, type DynamicModule, type ForwardReference, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { AppModule } from '../app.module.js';
import { AppConfig } from '../config/app-config.js';
import { HealthController } from '../health/health.controller.js';
import { PetsController } from '../pets/pets.controller.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ACCESS, Public, PUBLIC, RequireAccess } from './decorators/access.decorators.js';
import { MeController } from './me.controller.js';

type ModuleRef = Type<unknown> | DynamicModule | ForwardReference | Promise<DynamicModule>;

interface Route {
  controller: Type<unknown>;
  method: string;
  handler: Function;
  where: string;
}

/** Every controller reachable from a module, following imports (dynamic, forward-referenced and async). */
async function collectControllers(root: ModuleRef): Promise<Set<Type<unknown>>> {
  const controllers = new Set<Type<unknown>>();
  const seen = new Set<unknown>();
  const visit = async (ref: ModuleRef | undefined): Promise<void> => {
    if (!ref) return;
    let entry: unknown = ref instanceof Promise ? await ref : ref;
    if (entry && typeof entry === 'object' && 'forwardRef' in entry) entry = (entry as ForwardReference).forwardRef();
    if (!entry || seen.has(entry)) return;
    seen.add(entry);

    const dynamic = typeof entry === 'object' && 'module' in entry ? (entry as DynamicModule) : undefined;
    const moduleClass = (dynamic ? dynamic.module : entry) as Type<unknown>;
    const declared: Type<unknown>[] = [
      ...(Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, moduleClass) ?? []),
      ...(dynamic?.controllers ?? []),
    ];
    for (const controller of declared) controllers.add(controller);
    const imports: ModuleRef[] = [...(Reflect.getMetadata(MODULE_METADATA.IMPORTS, moduleClass) ?? []), ...(dynamic?.imports ?? [])];
    for (const imported of imports) await visit(imported);
  };
  await visit(root);
  return controllers;
}

/** The route handlers of a controller: methods (own or inherited) carrying Nest's path metadata. */
function routesOf(controller: Type<unknown>): Route[] {
  const routes: Route[] = [];
  const names = new Set<string>();
  for (let proto = controller.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || names.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      const handler = descriptor?.value;
      if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      names.add(name);
      const verb = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod] ?? '?';
      const classPath = Reflect.getMetadata(PATH_METADATA, controller) ?? '';
      const methodPath = Reflect.getMetadata(PATH_METADATA, handler);
      const path = `/${classPath}/${methodPath}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
      routes.push({ controller, method: name, handler, where: `${controller.name}.${name} (${verb} ${path})` });
    }
  }
  return routes;
}

const reflector = new Reflector();

function access(route: Route) {
  const targets = [route.handler, route.controller];
  return {
    isPublic: reflector.getAllAndOverride(PUBLIC, targets) === true,
    declares: reflector.getAllAndOverride(ACCESS, targets) !== undefined,
  };
}

/** Routes that would be refused for everyone (no declaration) or silently public despite declaring access. */
function auditRoutes(routes: Route[]): { undeclared: string[]; ambiguous: string[] } {
  const undeclared: string[] = [];
  const ambiguous: string[] = [];
  for (const route of routes) {
    const { isPublic, declares } = access(route);
    if (!isPublic && !declares) undeclared.push(route.where);
    // The guards let @Public() win; a route carrying both would skip the check it seems to declare.
    if (isPublic && declares) ambiguous.push(route.where);
  }
  return { undeclared, ambiguous };
}

let appRoutes: Promise<Route[]> | undefined;

/** Built once: AppModule.forRoot registers its data source name, and a second call only adds a warning. */
function applicationRoutes(): Promise<Route[]> {
  appRoutes ??= (async () => {
    const config = AppConfig.fromEnv({}, { LOG_LEVEL: 'silent' });
    const controllers = await collectControllers(AppModule.forRoot(config));
    return [...controllers].flatMap(routesOf);
  })();
  return appRoutes;
}

describe('route access declarations', () => {
  it('finds the controllers and routes of the whole application', async () => {
    const routes = await applicationRoutes();
    const controllers = new Set(routes.map((r) => r.controller));
    for (const expected of [MeController, ApiKeysController, PetsController, HealthController]) {
      expect(controllers.has(expected), expected.name).toBe(true);
    }
    expect(routes.length).toBeGreaterThanOrEqual(10);
    expect(routes.map((r) => r.where)).toContain('PetsController.findByStatus (GET /pet/findByStatus)');
  });

  it('every registered route is either @Public() or declares its access', async () => {
    const { undeclared } = auditRoutes(await applicationRoutes());
    expect(undeclared).toEqual([]);
  });

  it('no route is both @Public() and declares access (public would silently win)', async () => {
    const { ambiguous } = auditRoutes(await applicationRoutes());
    expect(ambiguous).toEqual([]);
  });

  it('every /v1 route declares access and only the documented public areas are public', async () => {
    const problems: string[] = [];
    for (const route of await applicationRoutes()) {
      const classPath = String(Reflect.getMetadata(PATH_METADATA, route.controller) ?? '').replace(/^\/+/, '');
      const { isPublic } = access(route);
      // Inbound webhooks (DESIGN §7) are the one /v1 area without a bearer credential.
      if (classPath.startsWith('v1/') && isPublic && !classPath.startsWith('v1/hooks')) problems.push(`${route.where} is public under /v1`);
    }
    expect(problems).toEqual([]);
  });

  describe('the audit itself', () => {
    @Controller('v1/things')
    class UndeclaredController {
      @Get()
      list() {}

      @Post()
      @RequireAccess('workflows', 'write')
      create() {}

      helper() {}
    }

    @Public()
    @Controller('open')
    class MixedController {
      @Get()
      read() {}

      @Post()
      @RequireAccess('workflows', 'write')
      write() {}
    }

    @Module({ controllers: [MixedController] })
    class InnerModule {}

    @Module({ imports: [InnerModule], controllers: [UndeclaredController] })
    class OuterModule {}

    it('flags an undeclared route and a public-with-access route, found through nested and dynamic imports', async () => {
      const controllers = await collectControllers({ module: class Root {}, imports: [Promise.resolve({ module: OuterModule })] });
      expect([...controllers]).toEqual(expect.arrayContaining([UndeclaredController, MixedController]));
      const routes = [...controllers].flatMap(routesOf);
      expect(routes.map((r) => r.method).sort()).toEqual(['create', 'list', 'read', 'write']);
      const { undeclared, ambiguous } = auditRoutes(routes);
      expect(undeclared).toEqual([expect.stringContaining('UndeclaredController.list')]);
      expect(ambiguous).toEqual([expect.stringContaining('MixedController.write')]);
    });
  });
});
