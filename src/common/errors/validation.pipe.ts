import { ValidationPipe, type ArgumentMetadata, type Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { findInputFault, inputFaultMessage } from '../validation/storable-input.js';
import { InvalidRequestError } from './common.errors.js';
import { toValidationError } from './validation.js';

/** Accepted query strings remembered per query DTO class (oldest forgotten first). */
const REMEMBERED_QUERIES_PER_DTO = 256;

/**
 * The global pipe: DTOs are transformed, unknown properties refused, failures rendered by
 * toValidationError.
 *
 * Query DTOs are remembered once accepted. The same query string comes back again and again (a
 * list polled, the same page reopened), and class-transformer plus class-validator cost a list
 * request more CPU than the rest of its own code. A query string already accepted for a DTO
 * class gets a fresh copy of the DTO it produced; anything new (or refused) is validated in
 * full. Only DTOs whose fields are all primitives are remembered, so a copy shares nothing with
 * another request. This relies on query validation depending on the query string alone, which
 * holds for declarative class-validator rules; a rule reading the clock or the database would
 * belong in the service anyway.
 */
export class AppValidationPipe extends ValidationPipe {
  private readonly acceptedQueries = new WeakMap<Type<unknown>, Map<string, object>>();
  /** Per query DTO: its scalar fields (a list field, declared with `@IsArray()` or `each`, is not one). */
  private readonly scalarQueryFields = new WeakMap<Type<unknown>, ReadonlySet<string>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { metatype } = metadata;
    // Path parameters exist only once routed, so the request middleware cannot see them: refused
    // here, first, like the body and query are before routing.
    if (metadata.type === 'param') assertStorableParam(value, metadata.data);
    if (metadata.type === 'query' && metatype && typeof value === 'object' && value !== null) this.assertSingleValues(value, metatype);
    if (metadata.type !== 'query' || !metatype || !this.toValidate(metadata) || typeof value !== 'object' || value === null) {
      return super.transform(value, metadata);
    }
    let accepted = this.acceptedQueries.get(metatype);
    if (!accepted) {
      accepted = new Map();
      this.acceptedQueries.set(metatype, accepted);
    }
    const key = JSON.stringify(value);
    const known = accepted.get(key);
    if (known) return copy(known);

    const dto: unknown = await super.transform(value, metadata);
    if (isFlat(dto)) {
      if (accepted.size >= REMEMBERED_QUERIES_PER_DTO) accepted.delete(accepted.keys().next().value as string);
      accepted.set(key, copy(dto));
    }
    return dto;
  }

  /**
   * A repeated query parameter (`limit=1&limit=2`) arrives as an array. Every field of a query DTO
   * is a scalar unless declared with `@IsArray()`, so an array anywhere else is refused by name
   * instead of failing a range or type rule with a misleading message.
   */
  private assertSingleValues(query: object, metatype: Type<unknown>): void {
    let scalars = this.scalarQueryFields.get(metatype);
    if (!scalars) {
      const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
      const lists = new Set(rules.filter((rule) => rule.name === 'isArray' || rule.each === true).map((rule) => rule.propertyName));
      scalars = new Set(rules.map((rule) => rule.propertyName).filter((name) => !lists.has(name)));
      this.scalarQueryFields.set(metatype, scalars);
    }
    // An unknown name, repeated or not, is left to the whitelist's "unknown property".
    for (const [name, value] of Object.entries(query)) {
      if (Array.isArray(value) && scalars.has(name)) throw new InvalidRequestError(`${name} must be given once`, name);
    }
  }
}

function assertStorableParam(value: unknown, name: string | undefined): void {
  const fault = findInputFault(value, undefined, name ?? '');
  if (fault) throw new InvalidRequestError(inputFaultMessage(fault), fault.field === '' ? undefined : fault.field);
}

function isFlat(dto: unknown): dto is object {
  return typeof dto === 'object' && dto !== null && Object.values(dto).every((v) => v === null || (typeof v !== 'object' && typeof v !== 'function'));
}

function copy<T extends object>(dto: T): T {
  return Object.assign(Object.create(Object.getPrototypeOf(dto) as object | null) as T, dto);
}

export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => toValidationError(errors),
  });
}
