import type { ValidationError } from 'class-validator';
import { InvalidRequestError, MissingRequiredFieldError } from './common.errors.js';
import type { DomainError } from './domain-error.js';

function firstLeaf(errors: ValidationError[], parent: string): { path: string; error: ValidationError } | undefined {
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    if (error.constraints && Object.keys(error.constraints).length > 0) return { path, error };
    const nested = firstLeaf(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}

function joinPath(parent: string, property: string): string {
  if (parent === '') return property;
  return /^\d+$/.test(property) ? `${parent}[${property}]` : `${parent}.${property}`;
}

/**
 * Turns class-validator's error tree into the envelope's error: the first failing property,
 * as a dot path, with MISSING_REQUIRED_FIELD when it is absent and INVALID_REQUEST otherwise.
 */
export function toValidationError(errors: ValidationError[]): DomainError {
  const leaf = firstLeaf(errors, '');
  if (!leaf) return new InvalidRequestError('The request is invalid');
  const { path, error } = leaf;
  const constraints = error.constraints ?? {};
  if (constraints.whitelistValidation) {
    return new InvalidRequestError(`Unknown property ${path}`, path);
  }
  // Optional properties skip validation when absent, so an absent value that failed is a required one.
  if (error.value === undefined || error.value === null) return new MissingRequiredFieldError(path);
  const message = Object.values(constraints)[0] ?? `${path} is invalid`;
  return new InvalidRequestError(message, path);
}
