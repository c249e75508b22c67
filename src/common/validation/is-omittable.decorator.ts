import { ValidateIf } from 'class-validator';

/**
 * Optional, but never null: validation is skipped only when the property is absent.
 * `@IsOptional()` also skips `null`, which would then reach a NOT NULL column as a 500.
 */
export const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);
