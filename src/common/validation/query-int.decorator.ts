import { Transform } from 'class-transformer';

const DECIMAL_INTEGER = /^-?[0-9]{1,16}$/;

/**
 * A query string value read as an integer only when it is written in decimal digits; anything else
 * (`0x10`, `1e2`, `1.5`, an empty value) is left a string, for `@IsInt()` to refuse with the field.
 * `@Type(() => Number)` used `Number()`, which reads all of those as numbers. Repeated parameters
 * (arrays) are refused by the validation pipe before this runs.
 */
export function parseQueryInt(value: unknown): unknown {
  return typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : value;
}

/** Put on every integer query field, with `@IsInt()` and its bounds. */
export const QueryInt = (): PropertyDecorator => Transform(({ value }) => parseQueryInt(value));
