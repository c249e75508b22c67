import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { QueryInt } from '../validation/query-int.decorator.js';
import { TextLength } from '../validation/text-length.decorator.js';

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

/**
 * A list that can also be walked by keyset cursor: `after` (a `pagination.next_cursor` the list
 * returned) starts the page right after that row, in constant time however deep; `page` is then
 * not used. Decoded and checked by `decodeCursor` (400 INVALID_REQUEST, field `after`).
 */
export class CursorPageQuery extends PageQuery {
  @ApiPropertyOptional({
    description:
      'Keyset cursor: the `pagination.next_cursor` of the previous page. The page then starts right after that row ' +
      '(newest first) instead of at `page`; filters must stay the same. Constant time however deep.',
  })
  @IsOptional()
  @IsString()
  @TextLength(1, 200)
  after?: string;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
  /** Lists walkable by cursor: the `after` of the next page, null on the last one. */
  next_cursor?: string | null;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export function paginate<T>(items: T[], total: number, query: Pick<PageQuery, 'page' | 'limit'>, nextCursor?: string | null): Page<T> {
  const pagination: Pagination = { page: query.page, limit: query.limit, total, pages: Math.ceil(total / query.limit) };
  if (nextCursor !== undefined) pagination.next_cursor = nextCursor;
  return { data: items, pagination };
}
