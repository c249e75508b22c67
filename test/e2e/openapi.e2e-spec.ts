import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrigger } from '../factories/triggers.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

// The OpenAPI document says exactly what the server does: checked on the document the
// running app serves, so that every route added later is held to it without a test of its own.

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  nullable?: boolean;
  enum?: unknown[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
};
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
  security?: Record<string, string[]>[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PUBLIC_PATHS = /^\/($|health\/|pet\b|v1\/hooks\/|v1\/channel-accounts\/\{account_id\}\/(webhook|voice)$|oauth\/|\.well-known\/)/;
/** The OAuth endpoints answer RFC 6749's error shape (docs/API.md, "OAuth 2.0"). */
const OAUTH_PATHS = /^\/(oauth|\.well-known)\//;
const run = promisify(execFile);

describe('OpenAPI document', () => {
  let t: TestApp;
  let org: TestOrganization;
  let doc: Document;

  beforeAll(async () => {
    t = await startTestApp();
    org = await createOrganization(t);
    const res = await t.http.get('/openapi.json').expect(200);
    doc = res.body as Document;
  });
  afterAll(() => t?.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ path, method, op, where: `${method.toUpperCase()} ${path}` })),
    );
  const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').pop() as string]) : schema);
  /** The object schemas a body may take: a oneOf/anyOf's branches, an allOf's single reference. */
  const shapes = (schema: Schema): Schema[] => {
    const s = resolve(schema);
    if (s.oneOf) return s.oneOf.flatMap(shapes);
    if (s.anyOf) return s.anyOf.flatMap(shapes);
    if (s.allOf?.length === 1) return shapes(s.allOf[0]);
    return [s];
  };

  it('lints clean: Redocly with no error or warning, Spectral (spectral:oas) with no error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(doc));
      const result = await run(process.execPath, ['scripts/lint-openapi.mjs', file], { cwd: process.cwd() }).then(
        (r) => ({ code: 0, output: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, output: e.stdout + e.stderr }),
      );
      expect(result.output).toContain('found no problem');
      expect(result.code, result.output).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('documents integer query parameters as integers, with the validators\' bounds', () => {
    const pages = operations().flatMap(({ where, op }) => (op.parameters ?? []).filter((p) => p.in === 'query' && (p.name === 'page' || p.name === 'limit')).map((p) => ({ where, p })));
    expect(pages.length).toBeGreaterThan(10);
    for (const { where, p } of pages) {
      expect(p.schema, `${where} ${p.name}`).toMatchObject({ type: 'integer', minimum: 1 });
      expect(p.required, `${where} ${p.name}`).toBe(false);
    }
    expect(pages.find(({ p }) => p.name === 'limit')?.p.schema?.maximum).toBe(100);
  });

  it('closes every request body schema (additionalProperties: false), as the ValidationPipe refuses unknown properties', () => {
    const problems: string[] = [];
    let bodies = 0;
    for (const { where, op } of operations()) {
      for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) {
        if (where.includes('/v1/hooks/')) continue; // any JSON: the hook reads what it knows
        bodies++;
        for (const shape of shapes(content.schema)) {
          if (shape.additionalProperties !== false) problems.push(`${where} ${type}: ${JSON.stringify(shape).slice(0, 80)}`);
        }
      }
    }
    expect(bodies).toBeGreaterThan(8);
    expect(problems).toEqual([]);
  });

  it('requires exactly the properties without IsOptional/IsOmittable, and carries lengths, patterns and enums', () => {
    const schemas = doc.components.schemas;
    expect(schemas.CreateWorkflowDto.required).toEqual(['name']);
    expect(schemas.UpdateWorkflowDto.required).toBeUndefined();
    expect(schemas.CreateWorkflowDto.properties?.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' });
    expect(schemas.CreateWorkflowDto.properties?.description).toMatchObject({ maxLength: 2000, nullable: true });
    expect(schemas.InboundMessageDto.required).toEqual(['channel', 'customer_id', 'message']);
    expect(schemas.InboundMessageDto.properties?.channel.enum).toEqual(['whatsapp', 'instagram', 'voice']);
    // nodes may be left out on create and update (no nodes yet), and is always answered.
    expect(schemas.WorkflowConfigurationDoc.required ?? []).not.toContain('nodes');
    expect(schemas.WorkflowConfigurationResponse.required).toContain('nodes');
    // A property the class-validator rules do not whitelist is refused, so it is not documented.
    expect(Object.keys(schemas.UpdateTriggerDto.properties ?? {}).sort()).toEqual(['channel', 'configuration', 'name']);
  });

  it('shows an export\'s download_url as a string from creation, a report\'s as null until completed', () => {
    const schemas = doc.components.schemas;
    expect(schemas.ExportResponse.properties?.download_url).toMatchObject({ type: 'string' });
    expect(schemas.ExportResponse.properties?.download_url.nullable).toBeUndefined();
    expect(schemas.ExportResponse.required).toContain('download_url');
    expect(schemas.ReportResponse.properties?.download_url).toMatchObject({ type: 'string', nullable: true });
  });

  it('documents public operations with security [] and the others with the bearer scheme', () => {
    for (const { path, where, op } of operations()) {
      if (PUBLIC_PATHS.test(path)) expect(op.security, where).toEqual([]);
      else expect(op.security, where).toEqual([{ bearer: [] }]);
    }
  });

  it('documents /v1/hooks/{trigger_id} once per method a webhook trigger accepts, with unique operationIds', () => {
    const hook = doc.paths['/v1/hooks/{trigger_id}'];
    expect(Object.keys(hook).sort()).toEqual(['get', 'post', 'put']);
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(hook.get.requestBody).toBeUndefined();
    for (const method of ['get', 'post', 'put']) expect(Object.keys(hook[method].responses)).toEqual(expect.arrayContaining(['202', '400', '401', '404', '429']));
  });

  it('describes trigger creation and trigger responses as a oneOf discriminated on type, with distinguishable branches', () => {
    for (const name of ['CreateTriggerDto', 'TriggerResponse']) {
      const schema = doc.components.schemas[name];
      expect(schema.discriminator?.propertyName, name).toBe('type');
      expect(Object.keys(schema.discriminator?.mapping ?? {}).sort()).toEqual(['api', 'message', 'schedule', 'webhook']);
      expect(schema.oneOf).toHaveLength(4);
      for (const [value, ref] of Object.entries(schema.discriminator?.mapping ?? {})) {
        const branch = resolve({ $ref: ref });
        expect(branch.properties?.type.enum, `${name} ${value}`).toEqual([value]);
        expect(branch.required).toEqual(expect.arrayContaining(['type', 'configuration']));
        const configuration = shapes(branch.properties?.configuration as Schema);
        expect(configuration).toHaveLength(1);
        expect(configuration[0].additionalProperties, `${name} ${value}`).toBe(false);
      }
    }
    const create = (type: string) => shapes({ $ref: doc.components.schemas.CreateTriggerDto.discriminator?.mapping?.[type] })[0];
    expect(shapes(create('message').properties?.configuration as Schema)[0]).toMatchObject({ required: ['keywords'], properties: { keywords: { minItems: 1, maxItems: 50 } } });
    expect(shapes(create('schedule').properties?.configuration as Schema)[0].required).toEqual(['cron_expression']);
    // The registry takes the method in any letter case: a pattern says so, an enum could not.
    expect(shapes(create('webhook').properties?.configuration as Schema)[0].properties?.method.pattern).toBe('^([Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Gg][Ee][Tt])$');
    expect(shapes(create('api').properties?.configuration as Schema)[0].properties?.rate_limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100000 });
  });

  it('documents every 4xx the shared mechanisms answer, with the error envelope', () => {
    const problems: string[] = [];
    for (const { path, where, op } of operations()) {
      const statuses = Object.keys(op.responses);
      // Body parsers and the input guard run on every route, before routing.
      const expected: string[] = ['400', '413', '415'];
      const params = op.parameters ?? [];
      if (!PUBLIC_PATHS.test(path)) expected.push('401', '403');
      if (params.some((p) => p.in === 'path')) expected.push('404');
      for (const status of expected) if (!statuses.includes(status)) problems.push(`${where}: no ${status}`);
      const envelope = path.startsWith('/pet') ? 'PetErrorResponse' : OAUTH_PATHS.test(path) ? 'OAuthErrorResponse' : 'ErrorEnvelopeDto';
      for (const status of statuses.filter((s) => /^4/.test(s))) {
        const schema = op.responses[status].content?.['application/json']?.schema;
        if (schema?.$ref !== `#/components/schemas/${envelope}`) problems.push(`${where} ${status}: ${JSON.stringify(schema)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(Object.keys(doc.paths['/v1/triggers/{trigger_id}/resume'].post.responses)).toContain('409');
    expect(Object.keys(doc.paths['/v1/triggers/{trigger_id}/fire'].post.responses)).toContain('429');
  });

  it('documents the rate limits on every limited operation: 429 with Retry-After, and the rate-limit headers on every answer', () => {
    const problems: string[] = [];
    const names = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];
    let limited = 0;
    for (const { path, where, op } of operations()) {
      // Exempt: probes and inbound webhooks, triggers' and providers' (whose own 429 is documented by the route).
      if (/^\/(health|v1\/hooks)\b/.test(path) || /^\/v1\/channel-accounts\/\{account_id\}\/(webhook|voice)$/.test(path)) continue;
      limited += 1;
      const responses = op.responses as Record<string, { headers?: Record<string, { $ref?: string }> }>;
      if (!responses['429']) problems.push(`${where}: no 429`);
      else if (responses['429'].headers?.['Retry-After']?.$ref !== '#/components/headers/Retry-After') problems.push(`${where}: 429 without Retry-After`);
      for (const [status, response] of Object.entries(responses)) {
        for (const name of names) if (response.headers?.[name]?.$ref !== `#/components/headers/${name}`) problems.push(`${where} ${status}: no ${name}`);
      }
    }
    expect(problems).toEqual([]);
    expect(limited).toBeGreaterThan(40);
    const headers = (doc.components as { headers?: Record<string, { schema?: { type?: string } }> }).headers ?? {};
    expect(headers['X-RateLimit-Reset']?.schema?.type).toBe('integer');
    expect(headers['RateLimit-Policy']?.schema?.type).toBe('string');
  });

  it('documents Idempotency-Key on every authenticated POST under /v1, with its 409, 422, 503 and Idempotent-Replayed, and nowhere else', () => {
    const problems: string[] = [];
    let keyed = 0;
    for (const { path, method, where, op } of operations()) {
      const header = (op.parameters ?? []).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      const expected = method === 'post' && path.startsWith('/v1/') && !PUBLIC_PATHS.test(path);
      if (!expected) {
        if (header) problems.push(`${where}: documents Idempotency-Key`);
        continue;
      }
      keyed += 1;
      if (!header) problems.push(`${where}: no Idempotency-Key`);
      else if (header.required !== false || header.schema?.maxLength !== 255 || header.schema?.minLength !== 1) problems.push(`${where}: ${JSON.stringify(header)}`);
      const responses = op.responses as Record<string, { description?: string; headers?: Record<string, { $ref?: string }> }>;
      if (!responses['409']?.description?.includes('IDEMPOTENCY_KEY_IN_USE')) problems.push(`${where}: 409 without IDEMPOTENCY_KEY_IN_USE`);
      if (!responses['422']?.description?.includes('IDEMPOTENCY_KEY_REUSED')) problems.push(`${where}: 422 without IDEMPOTENCY_KEY_REUSED`);
      if (responses['503']?.headers?.['Retry-After']?.$ref !== '#/components/headers/Retry-After') problems.push(`${where}: 503 without Retry-After`);
      for (const [status, response] of Object.entries(responses)) {
        if (/^2/.test(status) && response.headers?.['Idempotent-Replayed']?.$ref !== '#/components/headers/Idempotent-Replayed') problems.push(`${where} ${status}: no Idempotent-Replayed`);
      }
    }
    expect(problems).toEqual([]);
    expect(keyed).toBeGreaterThan(15);
  });

  it('documents a 2xx for every operation but the consent form and the root, which only redirect (302)', () => {
    const without = operations().filter(({ op }) => !Object.keys(op.responses).some((s) => /^2/.test(s))).map(({ where }) => where);
    expect(without.sort()).toEqual(['GET /', 'POST /oauth/authorize']);
    expect(Object.keys(doc.paths['/oauth/authorize'].post.responses)).toContain('302');
    expect(Object.keys(doc.paths['/'].get.responses)).toContain('302');
  });

  it('documents the OAuth form endpoints as form-encoded and the consent page as HTML', () => {
    for (const path of ['/oauth/authorize', '/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
      expect(Object.keys(doc.paths[path].post.requestBody?.content ?? {}), path).toEqual(['application/x-www-form-urlencoded']);
    }
    expect(Object.keys(doc.paths['/oauth/authorize'].get.responses['200'].content ?? {})).toEqual(['text/html']);
    expect(Object.keys(doc.paths['/oauth/authorize'].get.responses['400'].content ?? {}).sort()).toEqual(['application/json', 'text/html']);
  });

  it('documents the real success status: 201 create, 202 accepted, 200 others', () => {
    const success = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).filter((s) => /^2/.test(s));
    expect(success('/v1/workflows', 'post')).toEqual(['201']);
    expect(success('/v1/triggers', 'post')).toEqual(['201']);
    expect(success('/v1/api-keys', 'post')).toEqual(['201']);
    expect(success('/v1/messages', 'post')).toEqual(['202']);
    expect(success('/v1/triggers/{trigger_id}/fire', 'post')).toEqual(['202']);
    expect(success('/v1/hooks/{trigger_id}', 'post')).toEqual(['202']);
    expect(success('/v1/workflows/{workflow_id}/activate', 'post')).toEqual(['200']);
    expect(success('/v1/workflows/{workflow_id}', 'put')).toEqual(['200']);
    expect(success('/pet', 'post')).toEqual(['201']);
  });

  describe('responses match their documented schema', () => {
    let ajv: Ajv;
    let components: Document['components'];
    const validate = (path: string, method: string, status: number, body: unknown) => {
      const schema = doc.paths[path][method].responses[String(status)].content?.['application/json'].schema as Schema;
      const check = ajv.compile({ ...schema, components });
      return check(body) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    };

    beforeAll(() => {
      // OpenAPI 3.0 schemas: Ajv knows nullable; example/readOnly are annotations. Ajv's discriminator
      // does not take a mapping, so it is left out: the oneOf must then tell the branches apart alone.
      ajv = new Ajv({ strict: false, allErrors: true });
      addFormats.default(ajv);
      components = JSON.parse(JSON.stringify(doc.components), (key, value) => (key === 'discriminator' ? undefined : value));
    });

    it('a workflow without a description (description: null) and its configuration', async () => {
      const created = await t.http.post('/v1/workflows').set(org.auth()).send({ name: `openapi-${Date.now()}` }).expect(201);
      expect(created.body.data.description).toBeNull();
      expect(validate('/v1/workflows', 'post', 201, created.body)).toEqual([]);
      const got = await t.http.get(`/v1/workflows/${created.body.data.id}`).set(org.auth()).expect(200);
      expect(validate('/v1/workflows/{workflow_id}', 'get', 200, got.body)).toEqual([]);
    });

    it('a workflow with a node of each type, its request, an inbound message and the executions it started', async () => {
      const body = {
        name: `openapi-nodes-${Date.now()}`,
        description: 'All node types',
        channel: 'whatsapp',
        configuration: {
          trigger: { type: 'message', keywords: ['openapi-hello'] },
          nodes: [
            { id: 'greet', type: 'message', content: 'Hello', next: 'answer' },
            { id: 'answer', type: 'ai_response', knowledge_base: 'faq', next: 'ask' },
            { id: 'ask', type: 'form', fields: [{ name: 'email', type: 'email', required: true, label: 'Your email' }] },
          ],
        },
      };
      const request = ajv.compile({ ...components.schemas.CreateWorkflowDto, components });
      expect(request(body), JSON.stringify(request.errors)).toBe(true);
      const created = await t.http.post('/v1/workflows').set(org.auth()).send(body).expect(201);
      expect(validate('/v1/workflows', 'post', 201, created.body)).toEqual([]);
      const id = created.body.data.id as string;
      await t.http.post(`/v1/workflows/${id}/activate`).set(org.auth()).expect(200);
      const keyword = `openapi-${Date.now()}`;
      await createTrigger(t, org, id, 'message', { keywords: [keyword] });

      const message = { channel: 'whatsapp', customer_id: `+1555${Date.now()}`, message: `${keyword} there` };
      const accepted = await t.http.post('/v1/messages').set(org.auth()).send(message).expect(202);
      expect(accepted.body.data.executions).toHaveLength(1);
      expect(validate('/v1/messages', 'post', 202, accepted.body)).toEqual([]);
      const executions = await t.http.get(`/v1/workflows/${id}/executions`).set(org.auth()).expect(200);
      expect(executions.body.data).toHaveLength(1);
      expect(validate('/v1/workflows/{workflow_id}/executions', 'get', 200, executions.body)).toEqual([]);
    });

    it('error answers, in the error envelope and in the pet envelope', async () => {
      const invalid = await t.http.post('/v1/workflows').set(org.auth()).send({ name: 'x', colour: 'red' }).expect(400);
      expect(invalid.body.error.code).toBe('INVALID_REQUEST');
      expect(validate('/v1/workflows', 'post', 400, invalid.body)).toEqual([]);
      const missing = await t.http.get('/v1/workflows/00000000-0000-4000-8000-000000000000').set(org.auth()).expect(404);
      expect(validate('/v1/workflows/{workflow_id}', 'get', 404, missing.body)).toEqual([]);
      const pet = await t.http.get('/pet/999999999').expect(404);
      expect(validate('/pet/{petId}', 'get', 404, pet.body)).toEqual([]);
    });

    it('a trigger of each type, against the discriminated response schema', async () => {
      const workflow = await t.http.post('/v1/workflows').set(org.auth()).send({ name: `openapi-t-${Date.now()}` }).expect(201);
      const configurations = {
        message: { keywords: ['help'] },
        schedule: { cron_expression: '0 9 * * 1-5', timezone: 'Europe/Paris' },
        webhook: { secret: 's'.repeat(20), method: 'put', headers: { 'X-Source': 'crm' } },
        api: { rate_limit: 5 },
      };
      for (const [type, configuration] of Object.entries(configurations)) {
        const body = { name: `openapi-${type}-${Date.now()}`, type, workflow_id: workflow.body.data.id, configuration };
        // The request itself is valid against the documented request schema.
        const request = ajv.compile({ ...components.schemas.CreateTriggerDto, components });
        expect(request(body), JSON.stringify(request.errors)).toBe(true);
        const res = await t.http.post('/v1/triggers').set(org.auth()).send(body).expect(201);
        expect(validate('/v1/triggers', 'post', 201, res.body), type).toEqual([]);
      }
      const list = await t.http.get('/v1/triggers').set(org.auth()).expect(200);
      expect(validate('/v1/triggers', 'get', 200, list.body)).toEqual([]);
    });
  });
});
