import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { QueryInt } from '../validation/query-int.decorator.js';

export const MAX_PAGE_SIZE = 100;
/** Far beyond any real listing; keeps the offset a number PostgreSQL accepts. */
export const MAX_PAGE = 1_000_000;

/** `page` and `limit` of every list endpoint; each list's query DTO extends it with its filters. */
export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 })
  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'page must be an integer' })
  @Min(1, { message: 'page must be at least 1' })
  @Max(MAX_PAGE, { message: `page must be at most ${MAX_PAGE}` })
  page: number = 1;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })
  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(MAX_PAGE_SIZE, { message: `limit must be at most ${MAX_PAGE_SIZE}` })
  limit: number = 20;

  get offset(): number {
    return (this.page - 1) * this.limit;
  }
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export function paginate<T>(items: T[], total: number, query: Pick<PageQuery, 'page' | 'limit'>): Page<T> {
  return { data: items, pagination: { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit) } };
}
