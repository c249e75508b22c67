import fc from 'fast-check';
import { percentEncode, type WireRequest } from './http-client.js';
import { applyBodyMutation, badParamTexts, bodyMutations, deepJson, isDeepMarker, outOfRange, wrongTypes, type BodyMutation } from './mutations.js';
import { resolveRef, type JsonSchema, type OpenApiDocument, type Operation, type Parameter } from './openapi.js';
import { isPlainObject, schemaArbitrary } from './schema-arbitrary.js';

/**
 * A generated request, as data: it prints, shrinks and replays. Real ids are not in it, only a pool
 * name and an index (`{$pool, index}`), resolved when the request is sent, so that a seed replays
 * the same request against another run's resources.
 */
export type Credential = 'full_access' | 'read_only' | 'none' | 'invalid';

export type ParamValue =
  | { $pool: string; index: number }
  | { text: string }
  /** Sent as is, not percent-encoded: malformed escapes. */
  | { raw: string };

export type FuzzBody =
  /** contentType: undefined → application/json; null → no Content-Type header. */
  | { kind: 'json'; value: unknown; mutation?: BodyMutation; contentType?: string | null }
  | { kind: 'form'; fields: [string, string][] }
  | { kind: 'raw'; contentType: string | null; text: string }
  | { kind: 'bytes'; contentType: string; bytes: number[] }
  | { kind: 'none' };

export interface FuzzRequest {
  credential: Credential;
  path: Record<string, ParamValue>;
  query: [string, ParamValue][];
  body: FuzzBody;
}

/** Real resources by pool name (a path parameter's or a body property's name). */
export type Pools = Record<string, string[]>;

export interface RequestContext {
  document: OpenApiDocument;
  /** Pool names that exist (the values may change between operations). */
  poolNames: string[];
}

const MALFORMED_ESCAPES = ['%', '%zz', '%c0%af', '%00', '%ED%A0%BD', '%FF%FE', '%2e%2e%2f', '%E2%82'];

/** Pool name for a parameter or property name (`trigger_id` → `trigger_id`, `knowledge_base` → `name` of a knowledge base). */
function poolFor(context: RequestContext, operation: Operation | undefined, name: string): string | undefined {
  const aliases: Record<string, string> = { knowledge_base: 'kb_name' };
  const scoped = operation !== undefined ? `${scopeOf(operation)}:${name}` : undefined;
  if (scoped !== undefined && context.poolNames.includes(scoped)) return scoped;
  const candidate = aliases[name] ?? name;
  return context.poolNames.includes(candidate) ? candidate : undefined;
}

/** The resource an operation's path is about (`/v1/api-keys/{id}` → `api-keys`), to tell `{id}`s apart. */
export function scopeOf(operation: Operation): string {
  const segments = operation.path.split('/').filter((s) => s !== '' && s !== 'v1' && !s.startsWith('{'));
  return segments[0] ?? '';
}

function poolRef(pool: string): fc.Arbitrary<ParamValue> {
  return fc.nat({ max: 15 }).map((index) => ({ $pool: pool, index }));
}

function paramText(document: OpenApiDocument, schema: JsonSchema | undefined): fc.Arbitrary<string> {
  if (schema === undefined) return fc.string({ maxLength: 20 });
  return schemaArbitrary(document, schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

function invalidParam(schema: JsonSchema | undefined, document: OpenApiDocument): fc.Arbitrary<ParamValue> {
  const resolved = schema === undefined ? {} : resolveRef(document, schema);
  return fc.oneof(
    { weight: 4, arbitrary: badParamTexts.map((text) => ({ text })) },
    { weight: 1, arbitrary: outOfRange(resolved).map((n) => ({ text: String(n) })) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES).map((raw) => ({ raw })) },
  );
}

function pathParam(context: RequestContext, operation: Operation, parameter: Parameter): fc.Arbitrary<ParamValue> {
  const pool = poolFor(context, operation, parameter.name);
  const valid: fc.Arbitrary<ParamValue>[] = [];
  if (pool !== undefined) valid.push(poolRef(pool), poolRef(pool));
  valid.push(fc.uuid().map((text) => ({ text })));
  // An empty segment would change the route, not the parameter.
  valid.push(paramText(context.document, parameter.schema).filter((t) => t !== '').map((text) => ({ text })));
  return fc.oneof(
    { weight: 3, arbitrary: fc.oneof(...valid) },
    { weight: 1, arbitrary: invalidParam(parameter.schema, context.document).filter((v) => !('text' in v) || v.text !== '') },
  );
}

function queryArbitrary(context: RequestContext, operation: Operation): fc.Arbitrary<[string, ParamValue][]> {
  const parts = operation.queryParams.map((parameter) => {
    const valid = paramText(context.document, parameter.schema).map((text): [string, ParamValue][] => [[parameter.name, { text }]]);
    const invalid = fc.oneof(
      invalidParam(parameter.schema, context.document).map((value): [string, ParamValue][] => [[parameter.name, value]]),
      // Given twice: Express makes an array of it.
      fc.tuple(paramText(context.document, parameter.schema), paramText(context.document, parameter.schema)).map(
        ([a, b]): [string, ParamValue][] => [[parameter.name, { text: a }], [parameter.name, { text: b }]],
      ),
      // qs-style brackets, which extended parsers turn into objects.
      fc.constantFrom<[string, ParamValue][]>([[`${parameter.name}[a]`, { text: '1' }]], [[`${parameter.name}[]`, { text: '1' }]]),
    );
    const absent = fc.constant<[string, ParamValue][]>([]);
    return parameter.required === true ? fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: invalid }) : fc.oneof({ weight: 2, arbitrary: absent }, { weight: 2, arbitrary: valid }, { weight: 1, arbitrary: invalid });
  });
  const unknown = fc.oneof(
    { weight: 6, arbitrary: fc.constant<[string, ParamValue][]>([]) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('unknown', '__proto__', 'a\u0000', '\ud83d'), badParamTexts).map(([name, text]): [string, ParamValue][] => [[name, { text }]]) },
  );
  return fc.tuple(fc.tuple(...parts), unknown).map(([chosen, extra]) => [...chosen.flat(), ...extra]);
}

/** Body values for properties that name resources: sometimes a real one. */
function hintFor(context: RequestContext, operation: Operation) {
  return (name: string, schema: JsonSchema): fc.Arbitrary<unknown> | undefined => {
    const pool = poolFor(context, operation, name);
    if (pool === undefined || (schema.type !== undefined && schema.type !== 'string')) return undefined;
    return fc.oneof(poolRef(pool), schemaArbitrary(context.document, schema));
  };
}

function bodyArbitrary(context: RequestContext, operation: Operation): fc.Arbitrary<FuzzBody> {
  const requestBody = operation.operation.requestBody;
  const unexpected = fc.oneof(
    { weight: 8, arbitrary: fc.constant<FuzzBody>({ kind: 'none' }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('json' as const), value: wrongTypes }) },
  );
  if (requestBody === undefined) return unexpected;
  const [mediaType, media] = Object.entries(requestBody.content)[0] ?? [];
  if (mediaType === undefined || media?.schema === undefined) return unexpected;
  const valid = schemaArbitrary(context.document, media.schema, { hint: hintFor(context, operation) });

  const raw: fc.Arbitrary<FuzzBody> = fc.oneof<fc.Arbitrary<FuzzBody>[]>(
    fc.record({ kind: fc.constant('raw' as const), contentType: fc.constant(mediaType), text: fc.constantFrom('', '{', '{"a":', 'null', '[]', '"x"', '{"a":1,"a":2}', '{"__proto__":{"x":1}}', '\ufeff{}', '{"a":"\\ud83d"}', '{"\\u0000":1}') }),
    // A JSON body labelled as something else, or not labelled at all.
    fc.tuple(valid, fc.constantFrom<string | null>(null, 'text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/json; charset=utf-16'))
      .map(([value, contentType]): FuzzBody => ({ kind: 'json', value, contentType })),
    // Not UTF-8.
    fc.record({ kind: fc.constant('bytes' as const), contentType: fc.constant(mediaType), bytes: fc.constantFrom<number[]>([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d], [0xc0, 0xaf], [0xed, 0xa0, 0xbd]) }),
  );

  if (/json/i.test(mediaType)) {
    const json = fc.oneof(
      { weight: 3, arbitrary: valid.map((value): FuzzBody => ({ kind: 'json', value })) },
      { weight: 3, arbitrary: fc.tuple(valid, bodyMutations).map(([value, mutation]): FuzzBody => ({ kind: 'json', value, mutation })) },
      { weight: 1, arbitrary: raw },
    );
    return requestBody.required === true ? json : fc.oneof({ weight: 4, arbitrary: json }, { weight: 1, arbitrary: fc.constant<FuzzBody>({ kind: 'none' }) });
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    const fields = valid.map((value) => formFields(value));
    const mutatedFields = fc.tuple(fields, fc.nat(), fc.oneof(badParamTexts, fc.constantFrom('unknown', '__proto__', 'a[b]'))).map(([list, at, text]) => {
      if (list.length === 0) return [['unknown', text]] as [string, string][];
      const copy = list.map((f) => [...f] as [string, string]);
      const target = copy[at % copy.length] as [string, string];
      if (at % 3 === 0) copy.splice(at % copy.length, 1);
      else if (at % 3 === 1) target[1] = text;
      else copy.push([text, 'x']);
      return copy;
    });
    return fc.oneof(
      { weight: 3, arbitrary: fields.map((f): FuzzBody => ({ kind: 'form', fields: f })) },
      { weight: 3, arbitrary: mutatedFields.map((f): FuzzBody => ({ kind: 'form', fields: f })) },
      { weight: 1, arbitrary: raw },
    );
  }
  return fc.oneof(valid.map((value): FuzzBody => ({ kind: 'raw', contentType: mediaType, text: typeof value === 'string' ? value : JSON.stringify(value) ?? '' })), raw);
}

/** A pool reference in a form field, resolved when the request is rendered (as `{$pool, index}` markers are in JSON bodies). */
const FORM_POOL_MARKER = '__fuzz_pool__';

function formFields(value: unknown): [string, string][] {
  if (!isPlainObject(value)) return [];
  return Object.entries(value).map(([k, v]) => {
    if (isPlainObject(v) && typeof v.$pool === 'string' && typeof v.index === 'number' && Object.keys(v).length === 2) return [k, FORM_POOL_MARKER + JSON.stringify(v)];
    return [k, typeof v === 'string' ? v : JSON.stringify(v)];
  });
}

function formValue(value: string, pools: Pools): string {
  return value.startsWith(FORM_POOL_MARKER) ? pick(pools, JSON.parse(value.slice(FORM_POOL_MARKER.length)) as { $pool: string; index: number }) : value;
}

/** Every request the fuzzer may send to an operation: valid parts first, so that shrinking heads for them. */
export function requestArbitrary(context: RequestContext, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const path = fc.record(Object.fromEntries(operation.pathParams.map((p) => [p.name, pathParam(context, operation, p)])) as Record<string, fc.Arbitrary<ParamValue>>);
  return fc.record({
    // Mostly a key that gets past the guards, so that the body reaches validation and the database.
    credential: fc.oneof(
      { weight: 4, arbitrary: fc.constant<Credential>('full_access') },
      { weight: 2, arbitrary: fc.constant<Credential>('read_only') },
      { weight: 1, arbitrary: fc.constantFrom<Credential>('none', 'invalid') },
    ),
    path,
    query: queryArbitrary(context, operation),
    body: bodyArbitrary(context, operation),
  });
}

export interface RenderContext {
  pools: Pools;
  keys: Record<'full_access' | 'read_only', string>;
}

function resolveParam(value: ParamValue, pools: Pools): string {
  if ('raw' in value) return value.raw;
  if ('text' in value) return percentEncode(value.text);
  return percentEncode(pick(pools, value));
}

function pick(pools: Pools, ref: { $pool: string; index: number }): string {
  const pool = pools[ref.$pool] ?? [];
  // An emptied pool (its resources deleted) still names something: an id that does not exist.
  return pool.length === 0 ? '00000000-0000-4000-8000-000000000000' : (pool[ref.index % pool.length] as string);
}

const DEEP_TOKEN = /"__fuzz_deep_(\d+)_(object|array)__"/g;

/**
 * Replaces `{$pool, index}` markers in a body by real ids, and deep markers by a token that
 * serializeBody swaps for the nested text.
 */
function resolveMarkers(value: unknown, pools: Pools): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveMarkers(v, pools));
  if (!isPlainObject(value)) return value;
  if (isDeepMarker(value)) return `__fuzz_deep_${value.$deep}_${value.kind}__`;
  const keys = Object.keys(value);
  if (keys.length === 2 && typeof value.$pool === 'string' && typeof value.index === 'number') {
    return pick(pools, value as { $pool: string; index: number });
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) Object.defineProperty(out, key, { value: resolveMarkers(value[key], pools), enumerable: true, configurable: true, writable: true });
  return out;
}

/** JSON text of a body value (JSON.stringify writes a lone surrogate as the escape "\ud83d", as a client library would). */
export function serializeBody(value: unknown, pools: Pools): string {
  return (JSON.stringify(resolveMarkers(value, pools)) ?? '').replace(DEEP_TOKEN, (_, levels: string, kind: 'object' | 'array') => deepJson(Number(levels), kind));
}

/** The request on the wire. */
export function render(operation: Operation, request: FuzzRequest, context: RenderContext): WireRequest {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = request.path[name];
    return value === undefined ? 'missing' : resolveParam(value, context.pools);
  });
  const query = request.query.map(([name, value]) => `${percentEncode(name)}=${resolveParam(value, context.pools)}`).join('&');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (request.credential === 'full_access' || request.credential === 'read_only') headers.authorization = `Bearer ${context.keys[request.credential]}`;
  if (request.credential === 'invalid') headers.authorization = 'Bearer not-a-key-0000000000000000000000000000';
  let body: Buffer | undefined;
  const b = request.body;
  switch (b.kind) {
    case 'json': {
      const value = b.mutation !== undefined ? applyBodyMutation(b.value, b.mutation) : b.value;
      if (value !== undefined) {
        if (b.contentType !== null) headers['content-type'] = b.contentType ?? 'application/json';
        body = Buffer.from(serializeBody(value, context.pools), 'utf8');
      }
      break;
    }
    case 'form':
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = Buffer.from(b.fields.map(([k, v]) => `${percentEncode(k)}=${percentEncode(formValue(v, context.pools))}`).join('&'), 'latin1');
      break;
    case 'raw':
      if (b.contentType !== null) headers['content-type'] = b.contentType;
      body = Buffer.from(b.text, 'utf8');
      break;
    case 'bytes':
      headers['content-type'] = b.contentType;
      body = Buffer.from(b.bytes);
      break;
    case 'none':
      break;
  }
  return { method: operation.method, path: query === '' ? path : `${path}?${query}`, headers, body };
}
