import 'reflect-metadata';
import type { ArgumentMetadata } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsDate, IsIn, IsOptional } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { PageQuery } from '../pagination/page.query.js';
import { DomainError } from './domain-error.js';
import { createValidationPipe } from './validation.pipe.js';

class StatusQuery extends PageQuery {
  @IsOptional()
  @IsIn(['draft', 'active'])
  status?: string;
}

class SinceQuery {
  @IsOptional()
  @Type(() => Date)
  @IsDate()
  since?: Date;
}

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype, data: undefined });

async function failure(promise: Promise<unknown>): Promise<{ code: string; field?: string }> {
  const error = await promise.then(
    () => {
      throw new Error('expected a validation failure');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return { code: (error as DomainError).code, field: (error as DomainError).extra.field };
}

describe('AppValidationPipe', () => {
  it('answers a query string it has accepted before with an equal DTO of its own', async () => {
    const pipe = createValidationPipe();
    const first = (await pipe.transform({ limit: '5', page: '3' }, query(StatusQuery))) as StatusQuery;
    const again = (await pipe.transform({ limit: '5', page: '3' }, query(StatusQuery))) as StatusQuery;
    expect(again).toBeInstanceOf(StatusQuery);
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    expect(again.offset).toBe(10);
    again.limit = 99;
    expect(((await pipe.transform({ limit: '5', page: '3' }, query(StatusQuery))) as StatusQuery).limit).toBe(5);
  });

  it('validates every refused query string again, and tells DTO classes apart', async () => {
    const pipe = createValidationPipe();
    for (let i = 0; i < 2; i++) {
      expect(await failure(pipe.transform({ status: 'paused' }, query(StatusQuery)))).toEqual({ code: 'INVALID_REQUEST', field: 'status' });
      expect(await failure(pipe.transform({ limit: '0' }, query(StatusQuery)))).toEqual({ code: 'INVALID_REQUEST', field: 'limit' });
      expect(await failure(pipe.transform({ unknown: 'x' }, query(StatusQuery)))).toEqual({ code: 'INVALID_REQUEST', field: 'unknown' });
    }
    await pipe.transform({ status: 'draft' }, query(StatusQuery));
    expect(await failure(pipe.transform({ status: 'draft' }, query(PageQuery)))).toEqual({ code: 'INVALID_REQUEST', field: 'status' });
  });

  it('does not share a DTO holding objects between requests', async () => {
    const pipe = createValidationPipe();
    const first = (await pipe.transform({ since: '2025-01-01T00:00:00Z' }, query(SinceQuery))) as SinceQuery;
    const again = (await pipe.transform({ since: '2025-01-01T00:00:00Z' }, query(SinceQuery))) as SinceQuery;
    expect(again.since).toEqual(new Date('2025-01-01T00:00:00Z'));
    expect(again.since).not.toBe(first.since);
  });
});

describe('AppValidationPipe: strict query integers, single values, storable path parameters', () => {
  it.each([
    ['page', '0x10'],
    ['limit', '1e2'],
    ['page', '1.5'],
    ['page', ''],
    ['limit', '+5'],
  ])('refuses %s=%j with 400 INVALID_REQUEST on the field', async (name, raw) => {
    const pipe = createValidationPipe();
    expect(await failure(pipe.transform({ [name]: raw }, query(StatusQuery)))).toEqual({ code: 'INVALID_REQUEST', field: name });
  });

  it('refuses a repeated scalar parameter as "must be given once", leaving unknown ones to the whitelist', async () => {
    const pipe = createValidationPipe();
    const error = await pipe.transform({ limit: ['1', '2'] }, query(StatusQuery)).catch((e: DomainError) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).message).toBe('limit must be given once');
    expect((error as DomainError).extra.field).toBe('limit');
    expect(await failure(pipe.transform({ status: ['draft', 'draft'] }, query(StatusQuery)))).toEqual({ code: 'INVALID_REQUEST', field: 'status' });
    const unknown = await pipe.transform({ other: ['1', '2'] }, query(StatusQuery)).catch((e: DomainError) => e);
    expect((unknown as DomainError).message).toBe('Unknown property other');
  });

  it('still reads decimal page and limit', async () => {
    const dto = (await createValidationPipe().transform({ page: '02', limit: '50' }, query(StatusQuery))) as StatusQuery;
    expect(dto).toMatchObject({ page: 2, limit: 50 });
  });

  it('refuses NUL or a lone surrogate in a path parameter, naming it', async () => {
    const pipe = createValidationPipe();
    const param = (data?: string): ArgumentMetadata => ({ type: 'param', metatype: String, data });
    expect(await failure(pipe.transform('abc\u0000', param('customer_id')))).toEqual({ code: 'INVALID_REQUEST', field: 'customer_id' });
    expect(await failure(pipe.transform('\ud83d', param('trigger_id')))).toEqual({ code: 'INVALID_REQUEST', field: 'trigger_id' });
    expect(await failure(pipe.transform({ name: 'kb\u0000' }, { type: 'param', metatype: Object, data: undefined }))).toEqual({ code: 'INVALID_REQUEST', field: 'name' });
    expect(await pipe.transform('abc-😀', param('customer_id'))).toBe('abc-😀');
  });
});
