import { getMetadataStorage } from 'class-validator';
import { TEXT_LENGTH } from '../../validation/text-length.decorator.js';

/** The subset of an OpenAPI 3.0 schema object the post-processor reads and writes. */
export interface SchemaObject {
  type?: string;
  format?: string;
  nullable?: boolean;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  additionalProperties?: boolean | SchemaObject;
  oneOf?: SchemaObject[];
  anyOf?: SchemaObject[];
  allOf?: SchemaObject[];
  $ref?: string;
  [key: string]: unknown;
}

/** What class-validator says about one property of a DTO. */
export interface PropertyRules {
  /** No IsOptional, IsOmittable or ValidateIf: the property must be sent. */
  required: boolean;
  /** IsOptional lets null through as "absent" (not where IsOmittable, meaning never null, is also set). */
  nullable: boolean;
  /** Constraints on the value (or, for `each` validators, on each item). */
  value: SchemaObject;
  items: SchemaObject;
}

type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** class-validator's type of IsOptional and ValidateIf metadata. */
const CONDITIONAL = 'conditionalValidation';

/** Every class class-validator holds rules for, by name (how @nestjs/swagger names its schemas). */
export function validatedClasses(): Map<string, Function> {
  const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Function | string, unknown> };
  const classes = new Map<string, Function>();
  for (const target of storage.validationMetadatas.keys()) {
    if (typeof target === 'function' && target.name) classes.set(target.name, target);
  }
  return classes;
}

/**
 * The rules of every whitelisted property of `target` (own and inherited), read from class-validator's
 * metadata: the validators are the single source of truth, the document only repeats them.
 */
export function propertyRules(target: Function): Map<string, PropertyRules> {
  const metadatas: ValidationMetadata[] = getMetadataStorage().getTargetValidationMetadatas(target, '', true, false);
  const rules = new Map<string, PropertyRules>();
  // IsOmittable (an unnamed ValidateIf) says "never null" even where PartialType adds IsOptional.
  const omittable = new Set(metadatas.filter((m) => m.type === CONDITIONAL && m.name !== 'isOptional').map((m) => m.propertyName));
  for (const metadata of metadatas) {
    const property = metadata.propertyName;
    let rule = rules.get(property);
    if (!rule) {
      rule = { required: true, nullable: false, value: {}, items: {} };
      rules.set(property, rule);
    }
    if (metadata.type === CONDITIONAL) {
      rule.required = false;
      if (metadata.name === 'isOptional' && !omittable.has(property)) rule.nullable = true;
      continue;
    }
    apply(metadata.each ? rule.items : rule.value, metadata.name ?? metadata.type, metadata.constraints ?? []);
  }
  return rules;
}

/** Translates one validator into JSON Schema keywords; validators without an equivalent add nothing. */
function apply(schema: SchemaObject, name: string, constraints: unknown[]): void {
  const [first, second] = constraints;
  switch (name) {
    case TEXT_LENGTH:
    case 'isLength':
      if (typeof first === 'number' && first > 0) schema.minLength = first;
      if (typeof second === 'number') schema.maxLength = second;
      break;
    case 'minLength':
      if (typeof first === 'number') schema.minLength = first;
      break;
    case 'maxLength':
      if (typeof first === 'number') schema.maxLength = first;
      break;
    case 'matches': {
      const regex = first instanceof RegExp ? first : typeof first === 'string' ? new RegExp(first, typeof second === 'string' ? second : '') : undefined;
      // JSON Schema patterns have no flags; a case-insensitive or multi-line rule cannot be repeated exactly.
      if (regex && /^[gu]*$/.test(regex.flags)) schema.pattern = regex.source;
      break;
    }
    case 'isIn':
      if (Array.isArray(first)) schema.enum = [...first];
      break;
    case 'isEnum':
      if (first && typeof first === 'object') schema.enum = [...new Set(Object.values(first as object))];
      break;
    case 'min':
      if (typeof first === 'number') schema.minimum = first;
      break;
    case 'max':
      if (typeof first === 'number') schema.maximum = first;
      break;
    case 'isPositive':
      schema.minimum = Math.max(schema.minimum ?? 1, 1);
      break;
    case 'arrayMinSize':
      if (typeof first === 'number') schema.minItems = first;
      break;
    case 'arrayMaxSize':
      if (typeof first === 'number') schema.maxItems = first;
      break;
    case 'isString':
      schema.type = 'string';
      break;
    case 'isBoolean':
      schema.type = 'boolean';
      break;
    case 'isObject':
      schema.type = 'object';
      break;
    case 'isArray':
      schema.type = 'array';
      break;
    case 'isUUID':
      schema.format = 'uuid';
      break;
    case 'isEmail':
      schema.format = 'email';
      break;
    default:
      // Integer validators by any name (class-validator's isInt, a strict query-integer decorator).
      if (/int(eger)?$/i.test(name) && !/^isIn$/.test(name)) {
        schema.type = 'integer';
        if (typeof first === 'number' && typeof second === 'number') {
          schema.minimum = first;
          schema.maximum = second;
        }
      } else if (name === 'isNumber') {
        schema.type = 'number';
      }
  }
}
