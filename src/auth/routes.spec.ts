import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { Controller, Delete, Get, Module, Post, RequestMethod, type DynamicModule, type ForwardReference, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { AppModule } from '../app.module.js';
import { AppConfig } from '../config/app-config.js';
import { HealthController } from '../health/health.controller.js';
import { PetsController } from '../pets/pets.controller.js';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { namedThrottlers } from '../rate-limits/rate-limit-policies.js';
import { NO_RATE_LIMIT, NoRateLimit, RATE_LIMIT_CLASS, RateLimitClass, REQUEST_LIMIT_SOURCE } from '../rate-limits/rate-limit.decorators.js';
import { requiredLevel, scopeFor } from './access.js';
import { ACCESS, AnyCredential, Public, PUBLIC, RequireAccess } from './decorators/access.decorators.js';
import { MeController } from './me.controller.js';

type ModuleRef = Type<unknown> | DynamicModule | ForwardReference | Promise<DynamicModule>;

interface Route {
  controller: Type<unknown>;
  method: string;
  handler: Function;
  where: string;
  verb: string;
  path: string;
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
      routes.push({ controller, method: name, handler, where: `${controller.name}.${name} (${verb} ${path})`, verb, path });
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

/** /v1 routes that take any credential rather than a resource and action (`/v1/me`: who the caller is). */
const ANY_CREDENTIAL_V1 = ['GET /v1/me'];
/**
 * /v1 routes without a bearer credential: inbound webhooks, signed with the trigger's secret (docs/API.md, "Inbound
 * endpoints"), and the channel accounts' provider webhooks, signed by the provider with the account's app secret
 * (Meta) or auth token (Twilio's call requests) (docs/channels.md).
 */
const PUBLIC_V1 = [
  'ALL /v1/hooks/:trigger_id',
  'GET /v1/channel-accounts/:account_id/webhook',
  'POST /v1/channel-accounts/:account_id/webhook',
  'POST /v1/channel-accounts/:account_id/voice',
];
/** Path prefixes whose routes must declare a rate-limit class of their own resource, and the classes allowed. */
const CLASSED_AREAS: { prefix: string; group: string; classes: string[] }[] = [
  { prefix: '/v1/workflows', group: 'workflows', classes: ['read', 'write', 'delete', 'execution'] },
  { prefix: '/v1/triggers', group: 'triggers', classes: ['read', 'write', 'delete', 'execution'] },
  { prefix: '/v1/analytics', group: 'analytics', classes: ['realtime', 'historical', 'reports', 'export'] },
];

/** Every /v1 route names its resource and action with @RequireAccess, except the listed ones; and declares its rate-limit class where the Limits table gives one. */
function auditV1(routes: Route[]): string[] {
  const problems: string[] = [];
  for (const route of routes) {
    if (!route.path.startsWith('/v1/') && route.path !== '/v1') continue;
    const targets = [route.handler, route.controller];
    const key = `${route.verb} ${route.path}`;
    const requirement = reflector.getAllAndOverride(ACCESS, targets);
    const isPublic = reflector.getAllAndOverride(PUBLIC, targets) === true;
    if (isPublic) {
      if (!PUBLIC_V1.includes(key)) problems.push(`${route.where} is public under /v1`);
    } else if (requirement === 'any') {
      if (!ANY_CREDENTIAL_V1.includes(key)) problems.push(`${route.where} takes any credential instead of @RequireAccess(resource, action)`);
    } else if (!requirement) {
      problems.push(`${route.where} lacks @RequireAccess`);
    }
    const area = CLASSED_AREAS.find((a) => route.path === a.prefix || route.path.startsWith(`${a.prefix}/`));
    if (area && !isPublic) {
      const declared = reflector.getAllAndOverride(RATE_LIMIT_CLASS, targets);
      if (!declared) problems.push(`${route.where} lacks @RateLimitClass`);
      else if (declared.group !== area.group || !area.classes.includes(declared.routeClass)) {
        problems.push(`${route.where} declares rate-limit class ${declared.group}-${declared.routeClass}, not one of ${area.group}: ${area.classes.join(', ')}`);
      }
    }
    if (!isPublic && reflector.getAllAndOverride(NO_RATE_LIMIT, targets) !== undefined) problems.push(`${route.where} is authenticated but exempt from rate limits`);
  }
  return problems;
}

const ROUTES_DOC = new URL('../../docs/ROUTES.md', import.meta.url);
const BEGIN = '<!-- routes:begin (generated by src/auth/routes.spec.ts: UPDATE_ROUTES_DOC=1 npx vitest run --project unit src/auth/routes.spec.ts) -->';
const END = '<!-- routes:end -->';

/** The docs table: every route with its scope, API-key level and rate limits (default figures). */
function routeTable(routes: Route[]): string {
  const figures = new Map(namedThrottlers(AppConfig.fromEnv({}, { LOG_LEVEL: 'silent' })).map((t) => [t.name as string, t]));
  const per = (name: string) => {
    const t = figures.get(name);
    if (!t) throw new Error(`no throttler ${name}`);
    return `${t.limit}/${t.ttl === 3_600_000 ? 'h' : t.ttl === 60_000 ? 'min' : `${t.ttl / 1000}s`}`;
  };
  const rows = routes
    .map((route) => {
      const targets = [route.handler, route.controller];
      const isPublic = reflector.getAllAndOverride(PUBLIC, targets) === true;
      const requirement = reflector.getAllAndOverride(ACCESS, targets);
      const exempt = reflector.getAllAndOverride(NO_RATE_LIMIT, targets);
      const declared = reflector.getAllAndOverride(RATE_LIMIT_CLASS, targets);
      let scope = 'public';
      let level = '—';
      if (!isPublic && requirement === 'any') [scope, level] = ['any credential', 'any'];
      else if (!isPublic && requirement && requirement !== 'any') [scope, level] = [scopeFor(requirement) ? `\`${scopeFor(requirement)}\`` : '— (API keys only)', `\`${requiredLevel(requirement)}\``];
      let limits: string;
      if (exempt !== undefined) limits = `none here: ${exempt}`;
      else if (isPublic) limits = `public ${per('public')} per IP`;
      else {
        const resource = reflector.get(REQUEST_LIMIT_SOURCE, route.handler);
        limits = `credential ${per('credential')}${declared ? `; ${declared.group}-${declared.routeClass} ${per(declared.routeClass)}` : ''}${resource ? `; ${resource.label}` : ''}`;
      }
      const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      return { path, verb: route.verb, line: `| ${route.verb} | \`${path}\` | ${scope} | ${level} | ${limits} |` };
    })
    .sort((a, b) => a.path.localeCompare(b.path) || a.verb.localeCompare(b.verb));
  return ['| Method | Path | Scope (OAuth, JWT) | API key level | Rate limits (defaults) |', '|---|---|---|---|---|', ...rows.map((r) => r.line)].join('\n');
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

  it('every /v1 route declares its resource and action (@RequireAccess), with the listed exceptions only; workflow, trigger and analytics routes declare their rate-limit class', async () => {
    expect(auditV1(await applicationRoutes())).toEqual([]);
  });

  it('docs/ROUTES.md lists every route with its scope and rate limits, as generated here', async () => {
    const table = routeTable(await applicationRoutes());
    const doc = readFileSync(ROUTES_DOC, 'utf8');
    const [before, rest] = doc.split(BEGIN);
    expect(rest, `docs/ROUTES.md lacks the marker ${BEGIN}`).toBeDefined();
    const after = rest.split(END)[1] ?? '';
    const expected = `${before}${BEGIN}\n${table}\n${END}${after}`;
    if (process.env.UPDATE_ROUTES_DOC === '1' && doc !== expected) writeFileSync(ROUTES_DOC, expected);
    else expect(doc, 'docs/ROUTES.md is out of date: run UPDATE_ROUTES_DOC=1 npx vitest run --project unit src/auth/routes.spec.ts').toBe(expected);
  });

  it('every /v1 route declares access and only the documented public areas are public', async () => {
    const problems: string[] = [];
    for (const route of await applicationRoutes()) {
      const classPath = String(Reflect.getMetadata(PATH_METADATA, route.controller) ?? '').replace(/^\/+/, '');
      const { isPublic } = access(route);
      // Inbound webhooks (signed with the trigger's secret) and providers' webhooks are the /v1 areas without a bearer credential.
      const providerHook = PUBLIC_V1.some((r) => route.where.includes(`(${r})`));
      if (classPath.startsWith('v1/') && isPublic && !classPath.startsWith('v1/hooks') && !providerHook) problems.push(`${route.where} is public under /v1`);
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

    @Controller('v1/workflows')
    class LaxController {
      @Get('me-too')
      @AnyCredential()
      @RateLimitClass('workflows', 'read')
      anyone() {}

      @Post()
      @RequireAccess('workflows', 'write')
      unclassed() {}

      @Delete(':id')
      @RequireAccess('workflows', 'delete')
      @RateLimitClass('triggers', 'delete')
      otherGroup() {}

      @Get()
      @RequireAccess('workflows', 'read')
      @RateLimitClass('workflows', 'read')
      @NoRateLimit('why not')
      exempt() {}

      @Get('fine')
      @RequireAccess('workflows', 'read')
      @RateLimitClass('workflows', 'read')
      fine() {}
    }

    it('flags a /v1 route taking any credential, a missing or foreign rate-limit class, and an exempt authenticated route', () => {
      const problems = auditV1(routesOf(LaxController));
      expect(problems).toEqual([
        expect.stringContaining('LaxController.anyone (GET /v1/workflows/me-too) takes any credential'),
        expect.stringContaining('LaxController.unclassed (POST /v1/workflows) lacks @RateLimitClass'),
        expect.stringContaining('LaxController.otherGroup (DELETE /v1/workflows/:id) declares rate-limit class triggers-delete'),
        expect.stringContaining('LaxController.exempt (GET /v1/workflows) is authenticated but exempt'),
      ]);
    });

    it('renders a table row per route with its scope, level and limits', () => {
      const table = routeTable(routesOf(LaxController));
      expect(table).toContain('| GET | `/v1/workflows/fine` | `workflows:read` | `read_only` | credential 1000/h; workflows-read 1000/h |');
      expect(table).toContain('| DELETE | `/v1/workflows/{id}` | `workflows:delete` | `full_access` | credential 1000/h; triggers-delete 50/h |');
      expect(table).toContain('| GET | `/v1/workflows/me-too` | any credential | any |');
    });
  });
});
