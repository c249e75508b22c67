import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min, ValidateNested, validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { describe, expect, it } from 'vitest';
import { toValidationError } from './validation.js';

class Inner {
  @IsInt()
  @Min(1)
  count: number;
}

class Outer {
  @IsString()
  name: string;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => Inner)
  items?: Inner[];
}

function check(plain: object) {
  const errors = validateSync(plainToInstance(Outer, plain), { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true });
  return toValidationError(errors).toBody();
}

describe('toValidationError', () => {
  it('reports an absent required property as MISSING_REQUIRED_FIELD', () => {
    expect(check({})).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'name' });
  });

  it('reports a wrong type as INVALID_REQUEST with the field', () => {
    expect(check({ name: 42 })).toMatchObject({ code: 'INVALID_REQUEST', field: 'name' });
  });

  it('builds dot and index paths for nested values', () => {
    expect(check({ name: 'x', items: [{ count: 1 }, { count: 0 }] })).toMatchObject({ code: 'INVALID_REQUEST', field: 'items[1].count' });
    expect(check({ name: 'x', items: [{}] })).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'items[0].count' });
  });

  it('refuses unknown properties', () => {
    expect(check({ name: 'x', extra: true })).toMatchObject({ code: 'INVALID_REQUEST', field: 'extra' });
  });
});
