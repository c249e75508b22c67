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
