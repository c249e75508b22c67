import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema, OpenApiDocument, Operation, ResponseObject } from './openapi.js';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/** An answer as the fuzzer received it. */
export interface ReceivedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as text (UTF-8), '' when there is none. */
  text: string;
}

/**
 * What may never appear in an answer: a stack frame, a file path, SQL, a driver or ORM error.
 * A match that is also in the request (the client's own text echoed in a message) does not count.
 */
export const LEAK_PATTERNS: { name: string; pattern: RegExp }[] = [
  { name: 'stack frame', pattern: /\bat (?:[\w$.<>[\] ]+ )?\(?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/ },
  { name: 'stack frame', pattern: /\bat .+:\d+:\d+/ },
  { name: 'file path', pattern: /node_modules|\/work\/|\/home\/|\/usr\/(?:src|lib)\/|[\w-]+\.[cm]?[tj]s:\d+/ },
  { name: 'SQL', pattern: /\b(?:SELECT|INSERT|UPDATE|DELETE)\b[\s\S]+?\b(?:FROM|INTO|SET)\b/ },
  { name: 'SQL', pattern: /\b(?:QueryFailedError|EntityNotFoundError|TypeORMError|duplicate key value|violates (?:not-null|foreign key|unique|check) constraint|invalid input syntax for|relation "[^"]+" does not exist|column "[^"]+")/i },
  { name: 'error name', pattern: /\b(?:TypeError|RangeError|ReferenceError|SyntaxError): /},
  { name: 'driver error', pattern: /\b(?:ECONNREFUSED|ETIMEDOUT|EPIPE|ERR_[A-Z_]{4,})\b/ },
];

/** OpenAPI 3.0 schema → JSON Schema (draft 7, as Ajv reads it). */
export function toJsonSchema(schema: unknown, refBase: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, refBase));
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as JsonSchema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    switch (key) {
      case '$ref':
        out.$ref = (value as string).startsWith('#/') ? `${refBase}${value as string}` : value;
        break;
      case 'properties':
      case 'patternProperties':
        out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, s]) => [name, toJsonSchema(s, refBase)]));
        break;
      case 'discriminator':
        // Applied below through the oneOf branches; Ajv's own discriminator supports no mapping.
        break;
      case 'example':
      case 'examples':
      case 'xml':
      case 'externalDocs':
      case 'deprecated':
      case 'readOnly':
      case 'writeOnly':
      case 'nullable':
        break;
      default:
        out[key] = typeof value === 'object' ? toJsonSchema(value, refBase) : value;
    }
  }
  // A discriminator's mapping pins the tag in each branch it names; the oneOf then demands exactly
  // one branch, so branches that the tag does not tell apart still fail as ambiguous.
  const mapping = source.discriminator?.mapping;
  if (source.discriminator !== undefined && mapping !== undefined && Array.isArray(source.oneOf)) {
    const tag = source.discriminator.propertyName;
    out.oneOf = source.oneOf.map((branch, i) => {
      const values = Object.entries(mapping).filter(([, ref]) => ref === branch.$ref).map(([value]) => value);
      const converted = (out.oneOf as unknown[])[i];
      return values.length === 0 ? converted : { allOf: [converted, { properties: { [tag]: { enum: values } }, required: [tag] }] };
    });
  }
  // OpenAPI 3.0 exclusive bounds are booleans beside minimum/maximum.
  if (source.exclusiveMinimum === true) {
    out.exclusiveMinimum = source.minimum;
    delete out.minimum;
  } else if (source.exclusiveMinimum === false) delete out.exclusiveMinimum;
  if (source.exclusiveMaximum === true) {
    out.exclusiveMaximum = source.maximum;
    delete out.maximum;
  } else if (source.exclusiveMaximum === false) delete out.exclusiveMaximum;
  // A $ref beside other keywords: draft 7 ignores the siblings, so keep both through allOf.
  if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    const { $ref, ...rest } = out;
    const wrapped: Record<string, unknown> = { allOf: [{ $ref }, rest] };
    if (source.description !== undefined) wrapped.description = source.description;
    return nullable(source, wrapped);
  }
  return nullable(source, out);
}

function nullable(source: JsonSchema, out: Record<string, unknown>): unknown {
  if (source.nullable !== true) return out;
  if (typeof out.type === 'string' && out.$ref === undefined && out.allOf === undefined && out.oneOf === undefined && out.anyOf === undefined) {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

export interface CheckContext {
  operation: Operation;
  /** The request as sent, for telling an echo of the client's text from a leak. */
  requestText: string;
  method: string;
  /** The credential the request carried. */
  credential: 'full_access' | 'read_only' | 'none' | 'invalid';
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Validates answers against the document: status documented, media type, body schema, no leak. */
export class ResponseChecker {
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction | Error>();

  constructor(private readonly document: OpenApiDocument) {
    // The OpenAPI discriminator is turned into plain oneOf constraints by toJsonSchema.
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    this.ajv.addFormat('float', { type: 'number', validate: () => true });
    this.ajv.addFormat('double', { type: 'number', validate: () => true });
    this.ajv.addSchema({ $id: 'openapi.json', components: toJsonSchema(document.components ?? {}, 'openapi.json') }, 'openapi.json');
  }

  /** Every problem with the answer; empty when it honours the document. */
  check(context: CheckContext, response: ReceivedResponse): string[] {
    const { operation } = context;
    const problems: string[] = [];
    if (response.status >= 500) problems.push(`server error ${response.status}`);
    // The access rules (docs/API.md, "Authentication"): a secured operation never succeeds without a valid credential,
    // and a read-only key never changes anything. (A 4xx other than 401/403 may come first: the
    // body is parsed before the credential is checked.)
    if (operation.secured && response.status < 400 && (context.credential === 'none' || context.credential === 'invalid')) {
      problems.push(`answered ${response.status} to a request ${context.credential === 'none' ? 'without a credential' : 'with an invalid credential'}`);
    }
    if (operation.secured && response.status < 400 && context.credential === 'read_only' && !READ_METHODS.has(context.method)) {
      problems.push(`a read-only key was allowed to ${context.method} (${response.status})`);
    }

    const leak = this.findLeak(response.text, context.requestText);
    if (leak !== undefined) problems.push(`the body leaks ${leak}`);

    const documented = pickResponse(operation.operation.responses, response.status);
    // A 5xx is a failure whether documented or not; saying it is undocumented too adds nothing.
    if (documented === undefined && response.status >= 500) return problems;
    if (documented === undefined) {
      problems.push(`status ${response.status} is not documented (documented: ${Object.keys(operation.operation.responses).join(', ')})`);
      return problems;
    }
    problems.push(...this.checkBody(context, documented.key, documented.response, response));
    return problems;
  }

  private checkBody(context: CheckContext, statusKey: string, documented: ResponseObject, response: ReceivedResponse): string[] {
    const content = documented.content ?? {};
    const mediaTypes = Object.keys(content);
    const contentType = headerValue(response.headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
    const hasBody = response.text.length > 0;
    if (context.method === 'HEAD') return hasBody ? ['HEAD answered with a body'] : [];
    if (mediaTypes.length === 0) {
      return hasBody ? [`status ${statusKey} documents no body, got ${contentType ?? 'no content-type'}: ${truncate(response.text, 120)}`] : [];
    }
    if (!hasBody) return [`status ${statusKey} documents a ${mediaTypes.join(' or ')} body, got none`];
    const mediaType = mediaTypes.find((m) => m.toLowerCase() === contentType) ?? mediaTypes.find((m) => matchesRange(m, contentType));
    if (mediaType === undefined) return [`content-type ${contentType ?? '(none)'} is not documented for ${statusKey} (documented: ${mediaTypes.join(', ')})`];
    const schema = content[mediaType]?.schema;
    if (schema === undefined) return [];
    if (!/json/i.test(mediaType)) return [];
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return [`the ${statusKey} body is not JSON: ${truncate(response.text, 120)}`];
    }
    const validate = this.validator(`${context.operation.key} ${statusKey} ${mediaType}`, schema);
    if (validate instanceof Error) return [`the document's ${statusKey} schema does not compile: ${validate.message}`];
    if (validate(body)) return [];
    return [`the ${statusKey} body does not match the documented schema: ${describeErrors(validate.errors ?? [])}; body ${truncate(response.text, 300)}`];
  }

  private validator(key: string, schema: JsonSchema): ValidateFunction | Error {
    let validate = this.validators.get(key);
    if (validate === undefined) {
      try {
        validate = this.ajv.compile(toJsonSchema(schema, 'openapi.json') as object);
      } catch (error) {
        validate = error instanceof Error ? error : new Error(String(error));
      }
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** Compiles every documented response schema once: a document defect shows before any request. */
  compileAll(operations: Operation[]): string[] {
    const problems: string[] = [];
    for (const operation of operations) {
      for (const [status, response] of Object.entries(operation.operation.responses)) {
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          if (media.schema === undefined) continue;
          const validate = this.validator(`${operation.key} ${status} ${mediaType}`, media.schema);
          if (validate instanceof Error) problems.push(`${operation.key} ${status}: ${validate.message}`);
        }
      }
    }
    return problems;
  }

  private findLeak(text: string, requestText: string): string | undefined {
    for (const { name, pattern } of LEAK_PATTERNS) {
      const match = pattern.exec(text);
      if (match === null) continue;
      // The client's own text echoed back ("unknown property SELECT … FROM") is not a leak.
      if (requestText.includes(match[0]) || unescapedIncludes(requestText, match[0])) continue;
      return `${name} (${truncate(match[0], 80)})`;
    }
    return undefined;
  }
}

/**
 * The most telling schema error. A failed oneOf lists its branches' errors first; naming the oneOf
 * itself (which branches matched) says more than the first branch's complaint.
 */
export function describeErrors(errors: ErrorObject[]): string {
  const oneOf = errors.find((e) => e.keyword === 'oneOf');
  const error = oneOf ?? errors[0];
  if (error === undefined) return 'invalid';
  const at = error.instancePath === '' ? '(root)' : error.instancePath;
  if (error.keyword === 'oneOf') {
    const passing = (error.params as { passingSchemas?: number[] | null }).passingSchemas;
    const branches = passing === null || passing === undefined ? 'none of the branches' : `branches ${passing.join(' and ')} at once`;
    const firstBranchError = errors.find((e) => e !== error && e.instancePath.startsWith(error.instancePath));
    const detail = passing === null || passing === undefined ? (firstBranchError !== undefined ? `; first branch: ${firstBranchError.instancePath} ${firstBranchError.message ?? ''}` : '') : '';
    return `${at} matches ${branches} of its oneOf (schema ${error.schemaPath})${detail}`;
  }
  const extra = error.keyword === 'additionalProperties' ? ` '${(error.params as { additionalProperty: string }).additionalProperty}'` : '';
  return `${at} ${error.message ?? ''}${extra} (schema ${error.schemaPath})`;
}

/** The documented response for a status: exact code, then a range (`4XX`), then `default`. */
export function pickResponse(responses: Record<string, ResponseObject>, status: number): { key: string; response: ResponseObject } | undefined {
  const exact = responses[String(status)];
  if (exact !== undefined) return { key: String(status), response: exact };
  const rangeKey = Object.keys(responses).find((k) => k.toUpperCase() === `${String(status)[0]}XX`);
  if (rangeKey !== undefined) return { key: rangeKey, response: responses[rangeKey] as ResponseObject };
  if (responses.default !== undefined) return { key: 'default', response: responses.default };
  return undefined;
}

function matchesRange(documented: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  if (documented === '*/*') return true;
  const [type, subtype] = documented.toLowerCase().split('/');
  return subtype === '*' && actual.startsWith(`${type}/`);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function unescapedIncludes(haystack: string, needle: string): boolean {
  // The request text is JSON: compare against its decoded strings as well.
  try {
    return JSON.stringify(haystack).includes(needle) || haystack.includes(JSON.stringify(needle).slice(1, -1));
  } catch {
    return false;
  }
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
