import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { OptionalDateRange } from '../common/date-range.js';
import type { Cursor } from '../common/pagination/cursor.js';
import { SqlStatement } from '../database/sql-statement.js';
import { RollupFolder } from '../rollups/rollup-folder.js';
import type { ExecutionStatus, WorkflowExecution } from './entities/workflow-execution.entity.js';
import type { TriggerExecution } from './entities/trigger-execution.entity.js';

/** A list's filters, as the two execution lists share them. */
export interface ExecutionListFilter {
  status?: ExecutionStatus;
  range: OptionalDateRange;
}

/** Where a page starts: an offset (`page`), or just after a row's sort key (`after` cursor). */
export type PageStart = { offset: number; after?: undefined } | { offset?: undefined; after: Cursor };

/** A page's rows carry their sort key (`sortKey`, microseconds since the epoch) for the next cursor. */
export interface Keyed {
  id: string;
  sortKey: string;
}

/** The columns of one list (workflow or trigger executions) and the index that orders it. */
interface ListShape {
  table: string;
  /** The parent column (workflow_id, trigger_id) and the time column the list is ordered and filtered by. */
  parent: string;
  time: string;
  /** The selected columns, aliased to the entity's property names. */
  columns: string;
  /** The hourly rollup of the list's rows (migration ExecutionRollups). */
  hours: string;
}

const WORKFLOW_LIST: ListShape = {
  table: 'workflow_executions',
  parent: 'workflow_id',
  time: 'started_at',
  columns: `e.id, e.workflow_id AS "workflowId", e.status, e.started_at AS "startedAt", e.completed_at AS "completedAt",
    e.duration_ms AS "durationMs", e.customer_ref AS "customerRef", e.channel, e.input, e.output,
    e.workflow_version AS "workflowVersion", e.trigger_id AS "triggerId", e.retry_of AS "retryOf"`,
  hours: 'workflow_execution_hours',
};

const TRIGGER_LIST: ListShape = {
  table: 'trigger_executions',
  parent: 'trigger_id',
  time: 'triggered_at',
  columns: `e.id, e.organization_id AS "organizationId", e.trigger_id AS "triggerId", e.workflow_id AS "workflowId",
    e.workflow_execution_id AS "workflowExecutionId", e.status, e.input, e.error, e.triggered_at AS "triggeredAt",
    e.completed_at AS "completedAt", e.duration_ms AS "durationMs", e.created_at AS "createdAt"`,
  hours: 'trigger_execution_hours',
};

/** Which optional filters a request uses: a key naming its statements, and the conditions' values after the parent. */
function filterKey(filter: ExecutionListFilter, start: PageStart): { key: string; values: unknown[] } {
  let key = '';
  const values: unknown[] = [];
  if (filter.status) {
    key += 's';
    values.push(filter.status);
  }
  if (filter.range.start) {
    key += 'a';
    values.push(filter.range.start);
  }
  if (filter.range.end) {
    key += 'b';
    values.push(filter.range.end);
  }
  if (start.after) {
    key += 'k';
    values.push(start.after.micros, start.after.id);
  }
  return { key, values };
}

/**
 * The page statements of one list for one combination of filters, `$1` the parent and `$2` the
 * organization. The page's ids are chosen first by an index-only scan of the list's index
 * ((parent, time, id), or (parent, status, time, id) with a status filter): an OFFSET then steps
 * over index entries only, never over the wide rows it discards (input/output jsonb), and only
 * the page's rows are read from the table. `desc` false walks the index from the oldest end, for
 * pages nearer that end (see ExecutionListsRepository.page).
 */
function pageStatement(shape: ListShape, key: string, desc: boolean): SqlStatement<Record<string, unknown>> {
  const conditions = [`${shape.parent} = $1`];
  let n = 2;
  if (key.includes('s')) conditions.push(`status = $${++n}`);
  if (key.includes('a')) conditions.push(`${shape.time} >= $${++n}`);
  if (key.includes('b')) conditions.push(`${shape.time} <= $${++n}`);
  // Before the end (newest first), or from the start (oldest first), of the hour a deep offset
  // lands in (ExecutionListsRepository.page).
  if (key.includes('h')) conditions.push(`${shape.time} < $${++n}`);
  if (key.includes('g')) conditions.push(`${shape.time} >= $${++n}`);
  if (key.includes('k')) {
    // The row-value comparison is one index condition: the scan starts right after the cursor.
    conditions.push(`(${shape.time}, id) < (timestamptz 'epoch' + $${n + 1}::bigint * interval '1 microsecond', $${n + 2}::uuid)`);
    n += 2;
  }
  const order = desc ? 'DESC' : 'ASC';
  const name = `${shape.table}.page.${key}.${desc ? 'd' : 'a'}`;
  return new SqlStatement(
    `SELECT ${shape.columns}, (EXTRACT(EPOCH FROM p.${shape.time}) * 1000000)::bigint::text AS "sortKey"
       FROM (SELECT id, ${shape.time} FROM ${shape.table} WHERE ${conditions.join(' AND ')}
              ORDER BY ${shape.time} ${order}, id ${order} LIMIT $${n + 1} OFFSET $${n + 2}) p
       JOIN ${shape.table} e ON e.id = p.id
      WHERE e.organization_id = $2
      ORDER BY p.${shape.time} ${order}, p.id ${order}`,
    // Planned once per connection: the plan (the list's index, by the parent) is right at any size.
    { prepareAs: name },
  );
}

/** count(*) of the filtered rows, through the index matching the filter (no cursor: totals ignore it). */
function countStatement(shape: ListShape, key: string): SqlStatement<{ total: number }> {
  const conditions = [`${shape.parent} = $1`, 'organization_id = $2'];
  let n = 2;
  if (key.includes('s')) conditions.push(`status = $${++n}`);
  if (key.includes('a')) conditions.push(`${shape.time} >= $${++n}`);
  if (key.includes('b')) conditions.push(`${shape.time} <= $${++n}`);
  return new SqlStatement(`SELECT count(*)::int AS total FROM ${shape.table} WHERE ${conditions.join(' AND ')}`, {
    prepareAs: `${shape.table}.count.${key}`,
  });
}

const KEYS = ['', 's', 'a', 'b', 'sa', 'sb', 'ab', 'sab'];

/** What a rollup row counts of the list's rows of one status ('all' for every status). */
const ROLLUP_COLUMN: Record<string, string> = {
  all: 'executions',
  success: 'successful',
  failed: 'failed',
  running: '(executions - successful - failed)',
};
const ROLLUP_STATUSES = Object.keys(ROLLUP_COLUMN);

/**
 * Where an offset lands, from the hourly rollups (one row per hour and channel): the hour holding
 * the row at position `$2` of the list of one status (or all) walked from its newest end (`desc`)
 * or its oldest, and how many rows the hours before it in that walk hold. `$1` is the parent. The
 * rollup's primary key (parent, hour, channel) is read in the walk's order and the running sum
 * (integers: a numeric sum cost a third more) stops at the landing hour: only the hours between
 * that end and the offset are read, at most half of them since the caller walks from the nearer
 * end.
 */
function skipStatement(shape: ListShape, status: string, desc: boolean): SqlStatement<{ hour: Date; before: string }> {
  const order = desc ? 'DESC' : 'ASC';
  return new SqlStatement(
    `SELECT hour, before::text FROM (
       SELECT hour, n, sum(n) OVER (ORDER BY hour ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - n AS before
         FROM (SELECT hour, sum(${ROLLUP_COLUMN[status]})::int AS n FROM ${shape.hours} WHERE ${shape.parent} = $1
                GROUP BY hour ORDER BY hour ${order}) h
     ) c
     WHERE before + n > $2
     LIMIT 1`,
    { prepareAs: `${shape.hours}.skip.${status}.${desc ? 'd' : 'a'}` },
  );
}

/** The list's total of one status ('all') from the rollups, for a parent without a counter of it (a trigger's statuses). */
function rollupTotalStatement(shape: ListShape, status: string): SqlStatement<{ total: string | null }> {
  return new SqlStatement(`SELECT sum(${ROLLUP_COLUMN[status]})::text AS total FROM ${shape.hours} WHERE ${shape.parent} = $1`, {
    prepareAs: `${shape.hours}.total.${status}`,
  });
}

/** Offsets below this are stepped over in the index; deeper ones first skip whole hours. */
const SKIP_FROM_OFFSET = 2000;

class ListStatements {
  private readonly pages = new Map<string, SqlStatement<Record<string, unknown>>>();
  private readonly counts = new Map<string, SqlStatement<{ total: number }>>();
  private readonly skips = new Map<string, SqlStatement<{ hour: Date; before: string }>>();
  private readonly rollupTotals = new Map<string, SqlStatement<{ total: string | null }>>();

  constructor(readonly shape: ListShape) {
    for (const status of ROLLUP_STATUSES) {
      this.rollupTotals.set(status, rollupTotalStatement(shape, status));
      for (const desc of [true, false]) this.skips.set(`${status}.${desc ? 'd' : 'a'}`, skipStatement(shape, status, desc));
    }
    for (const key of ['h', 'sh']) this.pages.set(`${key}.d`, pageStatement(shape, key, true));
    for (const key of ['g', 'sg']) this.pages.set(`${key}.a`, pageStatement(shape, key, false));
    for (const key of KEYS) {
      this.counts.set(key, countStatement(shape, key));
      for (const cursorKey of [key, `${key}k`]) {
        this.pages.set(`${cursorKey}.d`, pageStatement(shape, cursorKey, true));
        this.pages.set(`${cursorKey}.a`, pageStatement(shape, cursorKey, false));
      }
    }
  }

  page(key: string, desc: boolean): SqlStatement<Record<string, unknown>> {
    return this.pages.get(`${key}.${desc ? 'd' : 'a'}`) as SqlStatement<Record<string, unknown>>;
  }

  /** The landing hour of an offset into the list of `status` ('all'), walked newest first (`desc`) or oldest first. */
  skip(status: string, desc: boolean): SqlStatement<{ hour: Date; before: string }> {
    return this.skips.get(`${status}.${desc ? 'd' : 'a'}`) as SqlStatement<{ hour: Date; before: string }>;
  }

  rollupTotal(status: string): SqlStatement<{ total: string | null }> {
    return this.rollupTotals.get(status) as SqlStatement<{ total: string | null }>;
  }

  count(key: string): SqlStatement<{ total: number }> {
    return this.counts.get(key.replace('k', '')) as SqlStatement<{ total: number }>;
  }
}

const WORKFLOW_STATEMENTS = new ListStatements(WORKFLOW_LIST);
const TRIGGER_STATEMENTS = new ListStatements(TRIGGER_LIST);

/** The statements as sent, for bench/explain-history.mjs (the plans of docs/PERFORMANCE.md). */
export const EXECUTION_LIST_STATEMENTS = { workflow: WORKFLOW_STATEMENTS, trigger: TRIGGER_STATEMENTS };

/**
 * The two execution lists in hand-written SQL. The caller supplies the unfiltered (or
 * status-only) total when the parent's counters know it exactly; otherwise the matches are
 * counted by count(*) over the index that matches the filter. TypeORM's findAndCount with a
 * select counted DISTINCT over every selected column (jsonb included): a scan and an on-disk sort
 * of the parent's every execution per request.
 */
@Injectable()
export class ExecutionListsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly rollups: RollupFolder,
  ) {}

  workflowPage(organizationId: string, workflowId: string, filter: ExecutionListFilter, start: PageStart, limit: number, knownTotal: number | null) {
    return this.page(WORKFLOW_STATEMENTS, organizationId, workflowId, filter, start, limit, knownTotal) as Promise<
      [(WorkflowExecution & Keyed)[], number]
    >;
  }

  triggerPage(organizationId: string, triggerId: string, filter: ExecutionListFilter, start: PageStart, limit: number, knownTotal: number | null) {
    return this.page(TRIGGER_STATEMENTS, organizationId, triggerId, filter, start, limit, knownTotal) as Promise<[(TriggerExecution & Keyed)[], number]>;
  }

  /**
   * One page and the total. Without a date filter, an offset of SKIP_FROM_OFFSET or more is
   * served from whichever end of the list is nearer: the hourly rollups give the hour the offset
   * lands in, counted from that end, and how many rows the hours before it hold (reading only the
   * rollup rows between that end and the offset); then only that hour's index entries before the
   * offset are stepped over, ids only. The deepest page (the middle) reads half of the parent's
   * rollup rows instead of half a million index entries. With a date filter, an offset past the
   * middle of the list is read from its other end through the index (ascending, offset
   * `total - offset - limit`, then reversed). The rollups are caught up with the change log first
   * (RollupFolder), so the page is the one `page` names, as exactly as an offset page under
   * concurrent inserts can be.
   */
  private async page(
    statements: ListStatements,
    organizationId: string,
    parentId: string,
    filter: ExecutionListFilter,
    start: PageStart,
    limit: number,
    knownTotal: number | null,
  ): Promise<[unknown[], number]> {
    const { key, values } = filterKey(filter, start);
    const undated = !filter.range.start && !filter.range.end;
    if (!start.after && undated && (start.offset >= SKIP_FROM_OFFSET || knownTotal === null)) {
      // The rollups also give the total of a status the parent has no counter for (a trigger's).
      await this.rollups.catchUp();
      const status = filter.status ?? 'all';
      const total = knownTotal ?? Number((await statements.rollupTotal(status).run(this.dataSource, [parentId]))[0]?.total ?? 0);
      const offset = start.offset;
      if (offset >= total) return [[], total];
      if (offset < SKIP_FROM_OFFSET) {
        const rows = await statements.page(key, true).run(this.dataSource, [parentId, organizationId, ...values, limit, offset]);
        return [rows, total];
      }
      if (offset + limit / 2 <= total / 2) {
        const [landing] = await statements.skip(status, true).run(this.dataSource, [parentId, offset]);
        if (!landing) return [[], total];
        const hourEnd = new Date(landing.hour.getTime() + 3_600_000);
        const rows = await statements
          .page(`${key}h`, true)
          .run(this.dataSource, [parentId, organizationId, ...values, hourEnd, limit, offset - Number(landing.before)]);
        return [rows, total];
      }
      // Past the middle: positions [fromEnd, fromEnd + take) of the oldest-first list, reversed.
      const fromEnd = Math.max(0, total - offset - limit);
      const take = Math.min(limit, total - offset);
      const [landing] = await statements.skip(status, false).run(this.dataSource, [parentId, fromEnd]);
      if (!landing) return [[], total];
      const rows = await statements
        .page(`${key}g`, false)
        .run(this.dataSource, [parentId, organizationId, ...values, landing.hour, take, fromEnd - Number(landing.before)]);
      return [rows.reverse(), total];
    }
    const countValues = values.slice(0, start.after ? -2 : undefined);
    const total = knownTotal ?? (await statements.count(key).run(this.dataSource, [parentId, organizationId, ...countValues]))[0].total;
    if (start.after) {
      const rows = await statements.page(key, true).run(this.dataSource, [parentId, organizationId, ...values, limit, 0]);
      return [rows, total];
    }
    const offset = start.offset;
    if (offset >= total) return [[], total];
    if (offset + limit / 2 > total / 2) {
      const fromEnd = Math.max(0, total - offset - limit);
      const take = Math.min(limit, total - offset);
      const rows = await statements.page(key, false).run(this.dataSource, [parentId, organizationId, ...values, take, fromEnd]);
      return [rows.reverse(), total];
    }
    const rows = await statements.page(key, true).run(this.dataSource, [parentId, organizationId, ...values, limit, offset]);
    return [rows, total];
  }
}
