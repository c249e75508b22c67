import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { SqlStatement } from '../database/sql-statement.js';
import type { ListWorkflowsQuery } from './dto/list-workflows.query.js';
import type { Workflow, WorkflowSummaryRow } from './entities/workflow.entity.js';

/**
 * The summary's columns other than its timestamps, aliased to the entity's property names: pg
 * already returns uuid/varchar as strings, int4 as numbers, timestamptz as Dates and jsonb
 * parsed, so a row *is* the entity's shape.
 */
const SCALAR_COLUMNS = `id, name, description, channel, status, version,
  execution_count AS "executionCount", success_count AS "successCount", failure_count AS "failureCount"`;

const BY_ID = new SqlStatement<Workflow>(
  `SELECT ${SCALAR_COLUMNS}, organization_id AS "organizationId", configuration,
      activated_at AS "activatedAt", deactivated_at AS "deactivatedAt", created_at AS "createdAt", updated_at AS "updatedAt"
    FROM workflows WHERE id = $1 AND organization_id = $2`,
  { prepareAs: 'workflows.by-id' },
);

/**
 * A timestamp as the exact text Date.prototype.toISOString() gives for it (UTC, milliseconds
 * truncated as pg's Date parsing truncates them). A page holds 80 timestamps: parsing each into
 * a Date only to print it again cost the client more than PostgreSQL spends formatting them.
 */
function isoText(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

const LIST_COLUMNS = `${SCALAR_COLUMNS}, (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint::text AS "sortKey",
  ${isoText('activated_at')} AS "activatedAt", ${isoText('deactivated_at')} AS "deactivatedAt",
  ${isoText('created_at')} AS "createdAt", ${isoText('updated_at')} AS "updatedAt"`;

/** The list's statements for one combination of filters; `$1` is the organization. */
interface ListStatements {
  page: SqlStatement<WorkflowSummaryRow & { total: number; sortKey: string }>;
  count: SqlStatement<{ total: number }>;
}

/** Which optional filters a query uses, in the order their parameters follow the organization. */
function listFilters(query: ListWorkflowsQuery): { key: string; values: unknown[] } {
  let key = '';
  const values: unknown[] = [];
  if (query.status) {
    key += 's';
    values.push(query.status);
  }
  if (query.channel) {
    key += 'c';
    values.push(query.channel);
  }
  if (query.search) {
    key += 'q';
    values.push(`%${escapeLike(query.search)}%`);
  }
  return { key, values };
}

/** The keyset condition of a cursor page: rows after the cursor's (created_at, id), newest first. */
function afterCursor(n: number): string {
  return `(created_at, id) < (timestamptz 'epoch' + $${n + 1}::bigint * interval '1 microsecond', $${n + 2}::uuid)`;
}

/**
 * Without a filter, the total is the organization's workflow count, which a trigger keeps exact
 * (migration WorkflowCounts): one row read instead of counting every workflow of the organization.
 * Filtered, the matches are counted.
 */
function listStatements(key: string): ListStatements {
  const cursor = key.includes('k');
  key = key.replace('k', '');
  const conditions = ['organization_id = $1'];
  let n = 1;
  if (key.includes('s')) conditions.push(`status = $${++n}`);
  if (key.includes('c')) conditions.push(`channel = $${++n}`);
  if (key.includes('q')) {
    n += 1;
    conditions.push(`(name ILIKE $${n} OR description ILIKE $${n})`);
  }
  const where = conditions.join(' AND ');
  const total =
    key === ''
      ? `SELECT workflow_count AS total FROM organizations WHERE id = $1`
      : `SELECT count(*)::int AS total FROM workflows WHERE ${where}`;
  if (key.includes('q')) return searchStatements(where, n, cursor);
  // A cursor's two values follow the filters'; LIMIT and OFFSET come last.
  const m = cursor ? n + 2 : n;
  return {
    page: new SqlStatement(
      `SELECT ${LIST_COLUMNS}, (${total}) AS total
        FROM workflows WHERE ${where}${cursor ? ` AND ${afterCursor(n)}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT $${m + 1} OFFSET $${m + 2}`,
      { prepareAs: `workflows.page.${key}${cursor ? 'k' : ''}` },
    ),
    count: new SqlStatement(total, { prepareAs: `workflows.count.${key}` }),
  };
}

/**
 * A search: the matches are found once, through the trigram indexes (migration WorkflowSearch),
 * and both the page and the total are taken from them. Walking the organization's workflows
 * newest first and filtering (the plan a generic plan may pick for a LIMIT) reads every workflow
 * when the term is rare, so these are planned on each call with the actual pattern rather than
 * prepared. A term under 3 characters has no trigram: the indexes then narrow to the
 * organization's rows only, each checked.
 */
function searchStatements(where: string, n: number, cursor: boolean): ListStatements {
  const matches = `WITH m AS MATERIALIZED (SELECT id, created_at FROM workflows WHERE ${where})`;
  const m = cursor ? n + 2 : n;
  return {
    page: new SqlStatement(
      `${matches}
      SELECT ${LIST_COLUMNS}, (SELECT count(*)::int FROM m) AS total
        FROM (SELECT id AS page_id, created_at AS page_at FROM m ${cursor ? `WHERE ${afterCursor(n)}` : ''}
               ORDER BY created_at DESC, id DESC LIMIT $${m + 1} OFFSET $${m + 2}) p
        JOIN workflows ON workflows.id = p.page_id
       ORDER BY p.page_at DESC, p.page_id DESC`,
    ),
    count: new SqlStatement(`${matches} SELECT count(*)::int AS total FROM m`),
  };
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Every filter combination's statements, built once. */
const LIST_STATEMENTS = new Map(
  ['', 's', 'c', 'sc', 'q', 'sq', 'cq', 'scq'].flatMap((key) => [`${key}k`, key]).map((key) => [key, listStatements(key)]),
);

/** The list's statements per filter key (s status, c channel, q search, k cursor), for bench/explain-history.mjs. */
export const WORKFLOW_LIST_STATEMENTS = LIST_STATEMENTS;
export const WORKFLOW_BY_ID = BY_ID;

/**
 * The two hot reads of the API (GET /v1/workflows/{id} and the list), in SQL. TypeORM's find
 * builds the query, aliases every column and hydrates entities on each call (findAndCount also
 * makes a second round trip): about a quarter of a read's CPU, for rows that need none of it.
 * Writes stay on the repository API in WorkflowsService.
 */
@Injectable()
export class WorkflowsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findOwned(organizationId: string, id: string): Promise<Workflow | null> {
    const rows = await BY_ID.run(this.dataSource, [id, organizationId]);
    return rows[0] ?? null;
  }

  /**
   * One page, newest first, and the number of matching rows, in one round trip (the total rides
   * on each row as a sub-select). A page past the end has no row to carry it: only then is it
   * asked alone.
   */
  async findPage(organizationId: string, query: ListWorkflowsQuery): Promise<[WorkflowSummaryRow[], number, string | null]> {
    const { key, values } = listFilters(query);
    const after = query.after !== undefined ? decodeCursor(query.after) : undefined;
    const { page, count } = LIST_STATEMENTS.get(after ? `${key}k` : key) as ListStatements;
    const cursorValues = after ? [after.micros, after.id] : [];
    const offset = after ? 0 : query.offset;
    const rows = await page.run(this.dataSource, [organizationId, ...values, ...cursorValues, query.limit, offset]);
    let total: number;
    // The extra `total` and `sortKey` on each row are left in place: the response mapper picks its fields.
    if (rows.length > 0) total = rows[0].total;
    else if (offset === 0 && !after) total = 0;
    else total = (await count.run(this.dataSource, [organizationId, ...values]))[0].total;
    const last = rows[rows.length - 1];
    const more = rows.length === query.limit && (after !== undefined || offset + query.limit < total);
    return [rows, total, more && last ? encodeCursor({ micros: last.sortKey, id: last.id }) : null];
  }
}
