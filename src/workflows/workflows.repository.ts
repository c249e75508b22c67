import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { SqlStatement } from '../database/sql-statement.js';
import type { ListWorkflowsQuery } from './dto/list-workflows.query.js';
import type { Workflow, WorkflowSummaryRow } from './entities/workflow.entity.js';
import { isoTimeSql } from '../common/iso-time.js';
import { workflowCountOf, workflowsVersionOf } from '../auth/organizations/organizations.sql.js';

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

const LIST_COLUMNS = `${SCALAR_COLUMNS}, (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint::text AS "sortKey",
  ${isoTimeSql('activated_at')} AS "activatedAt", ${isoTimeSql('deactivated_at')} AS "deactivatedAt",
  ${isoTimeSql('created_at')} AS "createdAt", ${isoTimeSql('updated_at')} AS "updatedAt"`;

/** The version of the organization's workflows (migration ListsWorkflowsVersion), as text. */
const VERSION = workflowsVersionOf('$1');

const WORKFLOWS_VERSION = new SqlStatement<{ version: string }>(`SELECT ${VERSION} AS version`, { prepareAs: 'workflows.version' });

/** A list row: the summary, plus the total, the cursor's sort key and (filtered lists) the organization's workflows version. */
type ListRow = WorkflowSummaryRow & { total: number; sortKey: string; workflowsVersion?: string };

/** The list's statements for one combination of filters; `$1` is the organization. */
interface ListStatements {
  /** The page and the total (and, filtered, the version the total belongs to). */
  page: SqlStatement<ListRow>;
  /** Filtered lists: the page without the total, and the version, for a total already known at that version. */
  pageOnly?: SqlStatement<ListRow>;
  count: SqlStatement<{ total: number; workflowsVersion?: string }>;
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
 * Filtered, the matches are counted, and each statement also returns the organization's
 * workflows version, so that the count can be reused while the version stays (WorkflowsRepository).
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
  // A cursor's two values follow the filters'; LIMIT and OFFSET come last.
  const m = cursor ? n + 2 : n;
  const pageWhere = `${where}${cursor ? ` AND ${afterCursor(n)}` : ''}`;
  const order = `ORDER BY created_at DESC, id DESC LIMIT $${m + 1} OFFSET $${m + 2}`;
  const name = `${key}${cursor ? 'k' : ''}`;
  if (key === '') {
    const total = workflowCountOf('$1');
    return {
      page: new SqlStatement(`SELECT ${LIST_COLUMNS}, (${total}) AS total FROM workflows WHERE ${pageWhere} ${order}`, { prepareAs: `workflows.page.${name}` }),
      count: new SqlStatement(total, { prepareAs: `workflows.count.${key}` }),
    };
  }
  // A search is planned on each call with its actual pattern (see searchStatements); the other
  // filters' plans do not depend on the values.
  const prepare = (kind: string) => (key.includes('q') ? {} : { prepareAs: `workflows.${kind}.${name}` });
  const pageOnly = new SqlStatement<ListRow>(`SELECT ${LIST_COLUMNS}, ${VERSION} AS "workflowsVersion" FROM workflows WHERE ${pageWhere} ${order}`, prepare('page-only'));
  if (key.includes('q')) return { ...searchStatements(where, n, cursor), pageOnly };
  return {
    page: new SqlStatement(`SELECT ${LIST_COLUMNS}, (SELECT count(*)::int FROM workflows WHERE ${where}) AS total, ${VERSION} AS "workflowsVersion" FROM workflows WHERE ${pageWhere} ${order}`, prepare('page')),
    pageOnly,
    count: new SqlStatement(`SELECT count(*)::int AS total, ${VERSION} AS "workflowsVersion" FROM workflows WHERE ${where}`, prepare('count')),
  };
}

/**
 * A search whose total is not known yet: the matches are found once, through the trigram indexes
 * (migration WorkflowSearch), and both the page and the total are taken from them. Walking the
 * organization's workflows newest first and filtering (the plan a generic plan may pick for a
 * LIMIT) reads every workflow when the term is rare, so these are planned on each call with the
 * actual pattern rather than prepared. A term under 3 characters has no trigram: the indexes then
 * narrow to the organization's rows only, each checked. With the total known (pageOnly), the
 * planner picks per pattern between that walk (common term: it stops after the page) and the
 * trigram indexes (rare term).
 */
function searchStatements(where: string, n: number, cursor: boolean): Omit<ListStatements, 'pageOnly'> {
  const matches = `WITH m AS MATERIALIZED (SELECT id, created_at FROM workflows WHERE ${where})`;
  const m = cursor ? n + 2 : n;
  return {
    page: new SqlStatement(
      `${matches}
      SELECT ${LIST_COLUMNS}, (SELECT count(*)::int FROM m) AS total, ${VERSION} AS "workflowsVersion"
        FROM (SELECT id AS page_id, created_at AS page_at FROM m ${cursor ? `WHERE ${afterCursor(n)}` : ''}
               ORDER BY created_at DESC, id DESC LIMIT $${m + 1} OFFSET $${m + 2}) p
        JOIN workflows ON workflows.id = p.page_id
       ORDER BY p.page_at DESC, p.page_id DESC`,
    ),
    count: new SqlStatement(`${matches} SELECT count(*)::int AS total, ${VERSION} AS "workflowsVersion" FROM m`),
  };
}

/**
 * A deep page of the unfiltered list (`page` at offset DEEP_FROM_OFFSET or more): the page's ids
 * are chosen by an index-only scan of idx_workflows_org_created (organization_id, created_at, id),
 * so the OFFSET steps over index entries only, not over the wide rows it discards; then only the
 * page's rows are read. `desc` false walks from the oldest end, for pages nearer that end (the
 * caller reverses them). `$1` the organization, `$2` LIMIT, `$3` OFFSET.
 */
function deepPageStatement(desc: boolean): SqlStatement<WorkflowSummaryRow & { sortKey: string }> {
  const order = desc ? 'DESC' : 'ASC';
  return new SqlStatement(
    `SELECT ${LIST_COLUMNS}
       FROM (SELECT id AS page_id, created_at AS page_at FROM workflows WHERE organization_id = $1
              ORDER BY created_at ${order}, id ${order} LIMIT $2 OFFSET $3) p
       JOIN workflows ON workflows.id = p.page_id
      WHERE workflows.organization_id = $1
      ORDER BY p.page_at ${order}, p.page_id ${order}`,
    { prepareAs: `workflows.deep-page.${desc ? 'd' : 'a'}` },
  );
}

const DEEP_PAGE = { desc: deepPageStatement(true), asc: deepPageStatement(false) };

/**
 * Offsets from which the unfiltered list first reads its total (the organization's counter) and
 * then serves the page from the nearer end of the index, ids only. Below, one statement (page and
 * total together) is cheaper: it steps over fewer than this many entries.
 */
const DEEP_FROM_OFFSET = 1000;

/** Filtered totals remembered per process (a few hundred bytes each). */
const TOTALS_CACHE_SIZE = 1000;

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
export const WORKFLOW_DEEP_PAGE = DEEP_PAGE;

/**
 * The two hot reads of the API (GET /v1/workflows/{id} and the list), in SQL. TypeORM's find
 * builds the query, aliases every column and hydrates entities on each call (findAndCount also
 * makes a second round trip): about a quarter of a read's CPU, for rows that need none of it.
 * Writes stay on the repository API in WorkflowsService.
 */
@Injectable()
export class WorkflowsRepository {
  /**
   * Totals of filtered lists and searches, per organization, filters and the organization's
   * workflows version they were counted at (least recently counted dropped first). Exact: a
   * total is used only when the page's own statement reads the same version, which any change of
   * the matching set bumps in its transaction.
   */
  private readonly totals = new Map<string, { version: string; total: number }>();

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
    const { page, pageOnly, count } = LIST_STATEMENTS.get(after ? `${key}k` : key) as ListStatements;
    const cursorValues = after ? [after.micros, after.id] : [];
    const offset = after ? 0 : query.offset;
    if (!after && key === '' && offset >= DEEP_FROM_OFFSET) return this.deepPage(organizationId, query.limit, offset, count);
    const pageValues = [organizationId, ...values, ...cursorValues, query.limit, offset];
    const totalKey = `${organizationId}\u0000${key}\u0000${values.join('\u0000')}`;
    const known = key === '' ? undefined : this.totals.get(totalKey);
    let rows: ListRow[];
    let total: number;
    if (known && pageOnly) {
      // The total counted earlier holds while the organization's workflows version is the same.
      rows = await pageOnly.run(this.dataSource, pageValues);
      if (rows.length > 0 && rows[0].workflowsVersion === known.version) total = known.total;
      else if (rows.length === 0 && offset === 0 && !after) total = 0;
      else total = await this.count(count, totalKey, [organizationId, ...values]);
    } else {
      rows = await page.run(this.dataSource, pageValues);
      // The extra `total`, `sortKey` and `workflowsVersion` on each row are left in place: the response mapper picks its fields.
      if (rows.length > 0) {
        total = rows[0].total;
        if (rows[0].workflowsVersion !== undefined) this.remember(totalKey, rows[0].workflowsVersion, total);
      } else if (offset === 0 && !after) total = 0;
      else total = await this.count(count, totalKey, [organizationId, ...values]);
    }
    const last = rows[rows.length - 1];
    const more = rows.length === query.limit && (after !== undefined || offset + query.limit < total);
    return [rows, total, more && last ? encodeCursor({ micros: last.sortKey, id: last.id }) : null];
  }

  /**
   * How many of the organization's workflows have `status`: the status-filtered list's total,
   * remembered at the organization's workflows version like the list's own (one row read while
   * no workflow's status changes; a count through the rows when one did).
   */
  async countByStatus(organizationId: string, status: string): Promise<number> {
    const totalKey = `${organizationId}\u0000s\u0000${status}`;
    const known = this.totals.get(totalKey);
    if (known) {
      const [{ version }] = await WORKFLOWS_VERSION.run(this.dataSource, [organizationId]);
      if (version === known.version) return known.total;
    }
    return this.count((LIST_STATEMENTS.get('s') as ListStatements).count, totalKey, [organizationId, status]);
  }

  /** The total alone (a page past the end, or a known total whose version changed), remembered when filtered. */
  private async count(count: ListStatements['count'], totalKey: string, values: unknown[]): Promise<number> {
    const [{ total, workflowsVersion }] = await count.run(this.dataSource, values);
    if (workflowsVersion !== undefined) this.remember(totalKey, workflowsVersion, total);
    return total;
  }

  private remember(totalKey: string, version: string, total: number): void {
    this.totals.delete(totalKey);
    if (this.totals.size >= TOTALS_CACHE_SIZE) this.totals.delete(this.totals.keys().next().value as string);
    this.totals.set(totalKey, { version, total });
  }

  /**
   * A deep page of the unfiltered list, exactly the rows OFFSET would give: the total first (one
   * row, the organization's counter), then the page read from whichever end of the index is
   * nearer, so no page steps over more than half of the organization's index entries (and none
   * over its rows). Past the middle, the page is read ascending at `total - offset - limit`
   * and reversed.
   */
  private async deepPage(
    organizationId: string,
    limit: number,
    offset: number,
    count: SqlStatement<{ total: number }>,
  ): Promise<[WorkflowSummaryRow[], number, string | null]> {
    const [{ total } = { total: 0 }] = await count.run(this.dataSource, [organizationId]);
    if (offset >= total) return [[], total, null];
    let rows: (WorkflowSummaryRow & { sortKey: string })[];
    if (offset + limit / 2 > total / 2) {
      const take = Math.min(limit, total - offset);
      rows = (await DEEP_PAGE.asc.run(this.dataSource, [organizationId, take, Math.max(0, total - offset - limit)])).reverse();
    } else {
      rows = await DEEP_PAGE.desc.run(this.dataSource, [organizationId, limit, offset]);
    }
    const last = rows[rows.length - 1];
    const more = rows.length === limit && offset + limit < total;
    return [rows, total, more && last ? encodeCursor({ micros: last.sortKey, id: last.id }) : null];
  }
}
