import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
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

const LIST_COLUMNS = `${SCALAR_COLUMNS},
  ${isoText('activated_at')} AS "activatedAt", ${isoText('deactivated_at')} AS "deactivatedAt",
  ${isoText('created_at')} AS "createdAt", ${isoText('updated_at')} AS "updatedAt"`;

/** The list's statements for one combination of filters; `$1` is the organization. */
interface ListStatements {
  page: SqlStatement<WorkflowSummaryRow & { total: number }>;
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

/**
 * Without a filter, the total is the organization's workflow count, which a trigger keeps exact
 * (migration WorkflowCounts): one row read instead of counting every workflow of the organization.
 * Filtered, the matches are counted.
 */
function listStatements(key: string): ListStatements {
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
  if (key.includes('q')) return searchStatements(where, n);
  return {
    page: new SqlStatement(
      `SELECT ${LIST_COLUMNS}, (${total}) AS total
        FROM workflows WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
      { prepareAs: `workflows.page.${key}` },
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
function searchStatements(where: string, n: number): ListStatements {
  const matches = `WITH m AS MATERIALIZED (SELECT id, created_at FROM workflows WHERE ${where})`;
  return {
    page: new SqlStatement(
      `${matches}
      SELECT ${LIST_COLUMNS}, (SELECT count(*)::int FROM m) AS total
        FROM (SELECT id AS page_id, created_at AS page_at FROM m ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}) p
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
const LIST_STATEMENTS = new Map(['', 's', 'c', 'sc', 'q', 'sq', 'cq', 'scq'].map((key) => [key, listStatements(key)]));

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
  async findPage(organizationId: string, query: ListWorkflowsQuery): Promise<[WorkflowSummaryRow[], number]> {
    const { key, values } = listFilters(query);
    const { page, count } = LIST_STATEMENTS.get(key) as ListStatements;
    const rows = await page.run(this.dataSource, [organizationId, ...values, query.limit, query.offset]);
    // The extra `total` on each row is left in place: the response mapper picks its fields.
    if (rows.length > 0) return [rows, rows[0].total];
    if (query.offset === 0) return [[], 0];
    const [{ total }] = await count.run(this.dataSource, [organizationId, ...values]);
    return [[], total];
  }
}
