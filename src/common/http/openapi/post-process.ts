import type { OpenAPIObject } from '@nestjs/swagger';
import { ERROR_DESCRIPTIONS } from '../api-docs.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENT_REPLAYED_HEADER } from '../idempotency-headers.js';
import type { RouteFacts } from './routes.js';
import { discriminationOf, isClosedSchema } from './schema-markers.js';
import { propertyRules, validatedClasses, type SchemaObject } from './validator-schemas.js';

export interface PostProcessOptions {
  /** Route facts by @nestjs/swagger's default operationId (see collectRouteFacts). */
  routes: Map<string, RouteFacts>;
  /** The schema of an error answered on `path` (the pet sample has its own envelope). */
  errorSchema(path: string): SchemaObject;
  /** The name of the bearer security scheme. */
  bearerScheme: string;
}

/** The rate-limit headers (docs/API.md, "Rate limits"), declared once and referenced by every limited response. */
export const RATE_LIMIT_HEADERS: Record<string, { description: string; schema: SchemaObject }> = {
  'X-RateLimit-Limit': { description: 'Allowance of the tightest limit that applies to this request', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Remaining': { description: 'Requests left in that limit\'s window', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when that window resets', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { description: 'IETF draft-ietf-httpapi-ratelimit-headers: every limit applied, e.g. `"credential";q=1000;w=3600, "workflows-delete";q=50;w=3600`', schema: { type: 'string' } },
  RateLimit: { description: 'IETF draft-ietf-httpapi-ratelimit-headers: the tightest limit, e.g. `"workflows-delete";r=49;t=3512`', schema: { type: 'string' } },
};
/** Idempotency-Key (src/idempotency): a header parameter of every authenticated POST under /v1. */
const IDEMPOTENCY_KEY_PARAMETER = {
  in: 'header',
  name: IDEMPOTENCY_KEY_HEADER,
  required: false,
  description:
    'Makes a retry safe: the first answer (2xx, or a 4xx other than 400, 422 and 429) is stored for 24 h per credential and replayed for ' +
    `a repeat with the same method, path and body, with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`. A 400, 422, 429 or 5xx answer is not stored: ` +
    'the key can be retried. E.g. a V4 UUID.',
  schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[ -~]+$' },
};
const IDEMPOTENCY_ERRORS: Record<string, string> = {
  '409': `IDEMPOTENCY_KEY_IN_USE: the first request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed (Retry-After)`,
  '422': `IDEMPOTENCY_KEY_REUSED: this ${IDEMPOTENCY_KEY_HEADER} was used for a different request`,
  '503': `SERVICE_UNAVAILABLE: a request with an ${IDEMPOTENCY_KEY_HEADER} cannot be served while the key store (Redis) is unreachable (Retry-After)`,
};
/** Statuses a replay can answer (stored answers), which carry Idempotent-Replayed when replayed. */
const REPLAYABLE = (status: string) => /^[23]\d\d$/.test(status) || ['404', '409'].includes(status);
const RETRY_AFTER_HEADER = { description: 'Seconds to wait before retrying (equals `error.retry_after`)', schema: { type: 'integer', minimum: 1 } };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'search'];
const REF_PREFIX = '#/components/schemas/';

type Operation = {
  operationId?: string;
  parameters?: { in: string; name: string; required?: boolean; schema?: SchemaObject }[];
  requestBody?: { content?: Record<string, { schema?: SchemaObject }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema?: SchemaObject }>; headers?: Record<string, { $ref: string }> }>;
  security?: Record<string, string[]>[];
};

/**
 * Makes the generated document say what the server does, for every route without per-route work:
 * request schemas from the class-validator rules, security and error responses from the route's own
 * metadata, the real success status, and discriminated unions where a class asks for one.
 */
export function postProcessOpenApi(generated: OpenAPIObject, options: PostProcessOptions): OpenAPIObject {
  // @nestjs/swagger puts the decorators' own arrays (enums of code constants) into the document: work
  // on a copy, so that no edit here can reach a constant the validators use.
  const document = structuredClone(generated);
  const schemas = (document.components ??= {}).schemas as Record<string, SchemaObject>;
  const classes = validatedClasses();

  for (const [path, item] of Object.entries(document.paths)) {
    const pathItem = item as Record<string, Operation>;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      const facts = factsOf(options.routes, operation.operationId, method);
      if (facts?.methods && !facts.methods.includes(method)) {
        delete pathItem[method];
        continue;
      }
      if (facts) {
        operation.security = facts.isPublic ? [] : [{ [options.bearerScheme]: [] }];
        if (facts.query) enrichQuery(operation, facts.query);
        fixSuccessStatus(operation, facts.successStatus);
      }
      relaxHeaders(operation);
      // A body on GET is undefined in HTTP; no client sends one.
      if (method === 'get' || method === 'head') delete operation.requestBody;
      documentErrors(operation, path, facts, options.errorSchema(path));
      if (method === 'post' && path.startsWith('/v1/') && facts && !facts.isPublic) documentIdempotency(operation, options.errorSchema(path));
      if (facts?.rateLimited) documentRateLimits(operation);
    }
  }
  const answers = (status: string) => Object.values(document.paths).some((item) => Object.values(item as Record<string, Operation>).some((op) => op?.responses?.[status]?.headers));
  const replays = Object.values(document.paths).some((item) =>
    Object.values(item as Record<string, Operation>).some((op) => Object.values(op?.responses ?? {}).some((r) => r?.headers?.[IDEMPOTENT_REPLAYED_HEADER])),
  );
  if (replays) {
    ((document.components.headers ??= {}) as Record<string, unknown>)[IDEMPOTENT_REPLAYED_HEADER] = {
      description: `Present (\`true\`) on an answer replayed for a repeated ${IDEMPOTENCY_KEY_HEADER}`,
      schema: { type: 'string', enum: ['true'] },
    };
  }
  if (answers('429')) {
    const headers = (document.components.headers ??= {}) as Record<string, unknown>;
    for (const [name, header] of Object.entries(RATE_LIMIT_HEADERS)) headers[name] = header;
  }
  if (answers('429') || answers('503')) ((document.components.headers ??= {}) as Record<string, unknown>)['Retry-After'] = RETRY_AFTER_HEADER;

  // Request bodies: their schemas (and the schemas they nest) get the validators' rules.
  const requestSchemas = reachable(schemas, collectRefs(Object.values(document.paths).flatMap((item) => Object.values(item as Record<string, Operation>).map((op) => op?.requestBody))));
  for (const name of requestSchemas) {
    const target = classes.get(name);
    if (target) enrichBody(schemas[name], target, schemas);
  }
  for (const [name, schema] of Object.entries(schemas)) if (isClosedSchema(name)) schema.additionalProperties = false;
  for (const name of Object.keys(schemas)) discriminate(schemas, name);
  declareTags(document);
  nullEnums(document);
  inlineNullableRefs(document, schemas);
  return document;
}

function factsOf(routes: Map<string, RouteFacts>, operationId: string | undefined, method: string): RouteFacts | undefined {
  if (!operationId) return undefined;
  return routes.get(operationId) ?? routes.get(operationId.replace(new RegExp(`_${method}$`), ''));
}

/** Query parameters: type, bounds, enum and required from the query DTO's validators. */
function enrichQuery(operation: Operation, query: Function): void {
  const rules = propertyRules(query);
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'query') continue;
    const rule = rules.get(parameter.name);
    if (!rule) continue;
    parameter.required = rule.required;
    parameter.schema = mergeRules(parameter.schema ?? {}, rule.value);
  }
}

/** Header arguments (`@Headers('user-agent')`) are read when present; none is required of a client. */
function relaxHeaders(operation: Operation): void {
  for (const parameter of operation.parameters ?? []) if (parameter.in === 'header') parameter.required = false;
}

function fixSuccessStatus(operation: Operation, status: number): void {
  const success = Object.keys(operation.responses).filter((s) => /^2\d\d$/.test(s));
  if (success.includes(String(status)) || success.length !== 1) return;
  operation.responses[String(status)] = operation.responses[success[0]];
  delete operation.responses[success[0]];
}

/** Every 4xx the shared mechanisms can answer, each with the route's error envelope. */
function documentErrors(operation: Operation, path: string, facts: RouteFacts | undefined, schema: SchemaObject): void {
  const statuses = new Set(Object.keys(operation.responses).filter((s) => /^4\d\d$/.test(s)));
  const parameters = operation.parameters ?? [];
  // The body parsers, the media-type check and the storable-input guard run before routing, on
  // every route: any request can send a malformed or oversized body, a body of another media type,
  // or a NUL in its query, whether or not the operation takes a body or parameters.
  statuses.add('400');
  statuses.add('413');
  statuses.add('415');
  if (facts && !facts.isPublic) {
    statuses.add('401');
    statuses.add('403');
  }
  if (facts?.rateLimited) statuses.add('429');
  if (parameters.some((p) => p.in === 'path') || /\{[^}]+\}/.test(path)) statuses.add('404');
  for (const status of [...statuses].sort()) {
    const description = ERROR_DESCRIPTIONS[Number(status)] ?? 'Error';
    const response = (operation.responses[status] ??= { description });
    response.description ||= description;
    // Other media types a route documents for the status (the consent page's HTML) are kept.
    response.content = { ...response.content, 'application/json': { schema: structuredClone(schema) } };
  }
  // Every route reads PostgreSQL or Redis, and any may meet an instance shutting down: 503 with
  // Retry-After. The probes are the exceptions: liveness needs neither, readiness documents its own.
  // (A probe refused while the process drains is the answer an orchestrator wants.)
  if (!DEPENDENCY_FREE_PATHS.has(path) && !operation.responses['503']) {
    operation.responses['503'] = {
      description: ERROR_DESCRIPTIONS[503],
      content: { 'application/json': { schema: structuredClone(schema) } },
      headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
    };
  }
}

/** Paths whose answer needs neither PostgreSQL nor Redis, or that document their own 503. */
const DEPENDENCY_FREE_PATHS: ReadonlySet<string> = new Set(['/', '/health/live', '/health/ready', '/metrics']);

/**
 * Idempotency-Key: the header parameter, 409 IDEMPOTENCY_KEY_IN_USE, 422 IDEMPOTENCY_KEY_REUSED and
 * 503 when Redis is unreachable (each added to what the route already documents for the status),
 * and Idempotent-Replayed on the answers a replay can give.
 */
function documentIdempotency(operation: Operation, schema: SchemaObject): void {
  (operation.parameters ??= []).push(structuredClone(IDEMPOTENCY_KEY_PARAMETER));
  for (const [status, description] of Object.entries(IDEMPOTENCY_ERRORS)) {
    const response = operation.responses[status];
    if (response) response.description = response.description ? `${response.description}; or ${description}` : description;
    else operation.responses[status] = { description, content: { 'application/json': { schema: structuredClone(schema) } } };
  }
  operation.responses['409'].headers = { ...operation.responses['409'].headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
  operation.responses['503'].headers = { ...operation.responses['503'].headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
  for (const [status, response] of Object.entries(operation.responses)) {
    if (REPLAYABLE(status)) response.headers = { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: { $ref: `#/components/headers/${IDEMPOTENT_REPLAYED_HEADER}` } };
  }
}

/**
 * A limited route: 429 RATE_LIMIT_EXCEEDED (with Retry-After), and the rate-limit headers on each
 * answer given after the throttler ran (every documented response; the body parsers' 400/413/415
 * come before it and may lack them, which a header that is not required allows).
 */
function documentRateLimits(operation: Operation): void {
  const response = operation.responses['429'];
  for (const answer of Object.values(operation.responses)) {
    answer.headers ??= {};
    for (const name of Object.keys(RATE_LIMIT_HEADERS)) answer.headers[name] = { $ref: `#/components/headers/${name}` };
  }
  response.headers = { ...response.headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
}

/** A request DTO: only the whitelisted properties, required as the validators say, unknown ones refused. */
function enrichBody(schema: SchemaObject, target: Function, schemas: Record<string, SchemaObject>): void {
  const rules = propertyRules(target);
  const properties = (schema.properties ??= {});
  for (const name of Object.keys(properties)) {
    const rule = rules.get(name);
    // forbidNonWhitelisted refuses a property without any validator, so it is not part of the request.
    if (!rule) {
      delete properties[name];
      continue;
    }
    let property = mergeRules(properties[name], rule.value);
    if (property.type === 'array' && property.items && !isComposite(property.items)) property.items = mergeRules(property.items, rule.items);
    if (rule.nullable) property = nullable(property, schemas);
    properties[name] = property;
  }
  const required = Object.keys(properties).filter((name) => rules.get(name)?.required);
  if (required.length > 0) schema.required = required;
  else delete schema.required;
  schema.type = 'object';
  schema.additionalProperties = false;
}

function isComposite(schema: SchemaObject): boolean {
  return Boolean(schema.$ref || schema.oneOf || schema.anyOf || schema.allOf);
}

/** The validator's keywords win over what the decorators repeated by hand; a $ref or union keeps its shape. */
function mergeRules(schema: SchemaObject, rules: SchemaObject): SchemaObject {
  if (isComposite(schema)) return schema;
  const merged: SchemaObject = { ...schema, ...rules };
  if (rules.type === 'integer' || (rules.type === undefined && schema.type === 'integer')) merged.type = 'integer';
  else if (schema.type && rules.type && schema.type !== rules.type && !(schema.type === 'array' && rules.type === 'object')) merged.type = rules.type;
  if (merged.type !== 'string') {
    delete merged.minLength;
    delete merged.maxLength;
    delete merged.pattern;
  }
  return merged;
}

/** OpenAPI 3.0 wants `type` beside `nullable`; a reference is wrapped in allOf to carry both. */
function nullable(schema: SchemaObject, schemas: Record<string, SchemaObject>): SchemaObject {
  let result: SchemaObject = schema;
  if (schema.$ref) {
    const { $ref, ...rest } = schema;
    result = { ...rest, allOf: [{ $ref }] };
  }
  const ref = result.allOf?.length === 1 ? result.allOf[0].$ref : undefined;
  const type = result.type ?? (ref ? schemas[ref.slice(REF_PREFIX.length)]?.type : undefined) ?? 'object';
  return { ...result, type, nullable: true };
}

function collectRefs(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, into);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith(REF_PREFIX)) into.add(v.slice(REF_PREFIX.length));
      else collectRefs(v, into);
    }
  }
  return into;
}

function reachable(schemas: Record<string, SchemaObject>, roots: Set<string>): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.pop() as string;
    if (seen.has(name) || !schemas[name]) continue;
    seen.add(name);
    queue.push(...collectRefs(schemas[name]));
  }
  return seen;
}

/** Turns a class marked ApiDiscriminated into a `oneOf` of its branches with a discriminator. */
function discriminate(schemas: Record<string, SchemaObject>, name: string): void {
  const discrimination = discriminationOf(name);
  if (!discrimination) return;
  const base = schemas[name];
  const mapping: Record<string, string> = {};
  for (const [value, overrides] of Object.entries(discrimination.branches)) {
    const branchName = `${name}${value.charAt(0).toUpperCase()}${value.slice(1)}`;
    const branch = structuredClone(base);
    branch.properties = { ...branch.properties, [discrimination.property]: { type: 'string', enum: [value] } };
    for (const [property, type] of Object.entries(overrides)) {
      const description = branch.properties[property]?.description;
      branch.properties[property] = { allOf: [{ $ref: REF_PREFIX + type.name }], ...(description ? { description } : {}) };
    }
    branch.required = [...new Set([...(branch.required ?? []), discrimination.property])];
    delete branch.description;
    branch.title = branchName;
    schemas[branchName] = branch;
    mapping[value] = REF_PREFIX + branchName;
  }
  schemas[name] = {
    ...(base.description ? { description: base.description } : {}),
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: discrimination.property, mapping },
  };
}

/** Every tag an operation uses, declared once at the top (sorted), as linters expect. */
function declareTags(document: OpenAPIObject): void {
  const declared = new Map((document.tags ?? []).map((tag) => [tag.name, tag]));
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, { tags?: string[] }>)) {
      for (const name of operation?.tags ?? []) if (!declared.has(name)) declared.set(name, { name });
    }
  }
  document.tags = [...declared.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * OpenAPI 3.0.3: `nullable` adds null to the type, but `enum` still restricts the values, so a
 * nullable enum lists null too (or validators such as Ajv refuse the null the server answers).
 */
function nullEnums(value: unknown): void {
  if (Array.isArray(value)) for (const v of value) nullEnums(v);
  else if (value && typeof value === 'object') {
    const schema = value as SchemaObject;
    if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
    for (const v of Object.values(schema)) nullEnums(v);
  }
}

/**
 * `{nullable: true, allOf: [{$ref}]}` does not accept null: the referenced schema still applies to
 * it (OpenAPI 3.0.3), and validators such as Ajv refuse the null the server answers. Such a property
 * gets the referenced schema inline, made nullable; a component left unused by that is removed.
 */
function inlineNullableRefs(document: OpenAPIObject, schemas: Record<string, SchemaObject>): void {
  const inlined = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const schema = value as SchemaObject;
    const ref = schema.nullable === true && schema.allOf?.length === 1 ? schema.allOf[0].$ref : undefined;
    if (ref?.startsWith(REF_PREFIX)) {
      const name = ref.slice(REF_PREFIX.length);
      const target = structuredClone(schemas[name] ?? {});
      delete schema.allOf;
      for (const [key, v] of Object.entries(target)) if (!(key in schema) || key === 'type') schema[key] = v;
      schema.nullable = true;
      inlined.add(name);
    }
    for (const v of Object.values(schema)) walk(v);
  };
  walk(document.paths);
  walk(schemas);
  const used = collectRefs(document.paths);
  for (const name of reachable(schemas, used)) used.add(name);
  for (const name of inlined) if (!used.has(name)) delete schemas[name];
}
