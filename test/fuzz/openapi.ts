/**
 * The slice of an OpenAPI 3.0 document the fuzzer reads, and the list of operations it fuzzes.
 * Everything is derived from the document the running service serves, so that a route added
 * later is fuzzed without touching the fuzzer.
 */

export type JsonSchema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  nullable?: boolean;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
};

export interface MediaType {
  schema?: JsonSchema;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

export interface ResponseObject {
  description?: string;
  content?: Record<string, MediaType>;
}

export interface OperationObject {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, JsonSchema> };
  security?: Record<string, string[]>[];
}

export interface Operation {
  /** `POST /v1/workflows`: how failures name the operation, and what FUZZ_ONLY matches. */
  key: string;
  method: string;
  path: string;
  operation: OperationObject;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** Whether the operation takes a credential: `security` absent (document default) or a non-empty requirement. */
  secured: boolean;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'search', 'query']);

/** Every operation of the document, in document order. */
export function listOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (item as { parameters?: Parameter[] }).parameters ?? [];
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const parameters = [...shared, ...(operation.parameters ?? [])];
      const security = operation.security ?? document.security ?? [];
      operations.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        operation,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        // `security: [{}]` (an empty requirement) means "no credential needed" as well.
        secured: security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0),
      });
    }
  }
  return operations;
}

/** Follows local `$ref`s (`#/components/schemas/X`) until a schema without one. */
export function resolveRef(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; current.$ref !== undefined; hops++) {
    if (hops > 32) throw new Error(`$ref loop at ${schema.$ref}`);
    const ref = current.$ref;
    if (!ref.startsWith('#/')) throw new Error(`only local $ref are supported, got ${ref}`);
    let target: unknown = document;
    for (const segment of ref.slice(2).split('/')) {
      target = (target as Record<string, unknown> | undefined)?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    if (target === undefined || target === null) throw new Error(`unresolved $ref ${ref}`);
    current = target as JsonSchema;
  }
  return current;
}
