import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** The class-validator name of `TextLength`; the OpenAPI enricher reads its constraints `[min, max]`. */
export const TEXT_LENGTH = 'textLength';

/**
 * Length of a string as PostgreSQL counts it for `varchar(n)`: in code points, not UTF-16 units.
 * "❤️" is 2 code points and 3 UTF-16 units; an emoji outside the BMP is 1 code point and 2 units.
 */
export function codePointLength(value: string): number {
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

/**
 * A string of `min`..`max` code points, the unit the database's `varchar(max)` counts in. The one
 * length rule for DTOs: class-validator's `Length`/`MaxLength` count UTF-16 units, which lets a
 * string of astral characters pass and then overflow its column.
 */
export function TextLength(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: TEXT_LENGTH,
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [min, max],
      options,
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const length = codePointLength(value);
          return length >= min && length <= max;
        },
        defaultMessage: (args: ValidationArguments) =>
          min > 0
            ? `${args.property} must be ${min} to ${max} characters long`
            : `${args.property} must be at most ${max} characters long`,
      },
    });
  };
}
