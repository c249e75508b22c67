import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { executionRetentionsSql } from '../../auth/organizations/organizations.sql.js';
import { AppConfig } from '../../config/app-config.js';

/**
 * A table range-partitioned by month on its UUIDv7 id, whose rows carry `organization_id`, with the
 * tables partitioned with the same monthly bounds on a key that points at its id (their month's
 * partitions are removed with its own, before it) and side tables keyed by its id, not partitioned,
 * whose rows go with it.
 */
export interface PartitionedGroup {
  table: string;
  children: readonly { table: string; key: string }[];
  sides: readonly { table: string; key: string }[];
  /** SQL true for a row (alias `t`) that must stay: its execution still runs, it is still being delivered. */
  held: (t: string) => string;
  /** SQL true when a partition holds such a row (`child(table)`: the child's partition of the same month), read cheaply. */
  busy: (partition: string, upper: string, child: (table: string) => string) => string;
}

/** Rows whose own status says they are still in progress. */
const byStatus = (status: string) => ({
  held: (t: string) => `${t}.status = '${status}'`,
  busy: (partition: string) => `EXISTS (SELECT 1 FROM ONLY "${partition}" WHERE status = '${status}')`,
});

/** The partitioned tables (migrations ExecutionRetention, ExecutionsPartitioned, MessagesPartitioned, WebhookDeliveriesPartitioned). */
export const PARTITIONED_GROUPS: readonly PartitionedGroup[] = [
  // A delivery still being attempted (pending) stays, with its attempts.
  { table: 'webhook_deliveries', children: [{ table: 'webhook_delivery_attempts', key: 'delivery_id' }], sides: [], ...byStatus('pending') },
  {
    // A message of an execution still running (its conversation) or still being sent stays.
    table: 'messages',
    children: [{ table: 'message_deliveries', key: 'message_id' }],
    sides: [{ table: 'message_provider_ids', key: 'message_id' }],
    held: (t) =>
      `(EXISTS (SELECT 1 FROM workflow_executions e WHERE e.id = ${t}.execution_id AND e.status = 'running')
        OR EXISTS (SELECT 1 FROM message_deliveries d WHERE d.message_id = ${t}.id AND d.status IN ('queued', 'sending')))`,
    // The running executions are few (a partial index): each is looked up in the month by the execution index.
    busy: (partition, upper, child) =>
      `EXISTS (SELECT 1 FROM workflow_executions e WHERE e.status = 'running' AND e.id < '${upper}'::uuid
                  AND EXISTS (SELECT 1 FROM ONLY "${partition}" m WHERE m.execution_id = e.id))
       OR EXISTS (SELECT 1 FROM ONLY "${child('message_deliveries')}" WHERE status IN ('queued', 'sending'))`,
  },
  { table: 'trigger_executions', children: [], sides: [], ...byStatus('running') },
  {
    table: 'workflow_executions',
    children: [
      { table: 'execution_steps', key: 'execution_id' },
      { table: 'execution_answers', key: 'execution_id' },
    ],
    sides: [{ table: 'workflow_execution_retries', key: 'retry_of' }],
    ...byStatus('running'),
  },
];
/** Every partitioned table, parents and children. */
export const PARTITIONED_TABLES = PARTITIONED_GROUPS.flatMap((g) => [g.table, ...g.children.map((c) => c.table)]);
/** How often a worker runs the retention pass; the first runs a minute after start. */
export const RETENTION_EVERY_MS = 3_600_000;
const FIRST_PASS_AFTER_MS = 60_000;
/** Rows deleted per statement when a partition is trimmed (with their children's and side rows). */
export const TRIM_BATCH = 1_000;
/**
 * How long a pass may spend trimming (the drops are not counted: each is a catalog change). A pass makes at
 * least one trim statement, then stops at the first batch boundary past the budget; what is left waits for
 * the next pass, TRIM_PAUSE_MS later. So shortening the retention by months, or a backlog after downtime,
 * spreads its DELETEs over many short passes instead of one long one that the engine's statements queue behind.
 */
export const TRIM_BUDGET_MS = 500;
/** The pause before the next pass when the last one left rows to trim. */
export const TRIM_PAUSE_MS = 5_000;
/**
 * After each month's check and each group's drop, a pass rests this many times as long as the step took: a
 * pass that drops months (their checks read them whole, their files are removed at the commit) takes about a
 * tenth of one connection's time, ten times as long in all, instead of a share of the cores the engine runs on.
 */
export const PACE_REST_RATIO = 9;
/** How far ahead the monthly partitions are created. */
const MONTHS_AHEAD = 2;
/**
 * A partition drop waits at most this long for its tables' locks. Below PostgreSQL's deadlock_timeout
 * (1 s by default): when a drop and the engine's statements wait for each other's tables, the drop
 * gives up before the deadlock check runs, so the engine's statement is never the one cancelled.
 */
const DROP_LOCK_TIMEOUT = '400ms';
/** Tries of a drop whose locks were not granted in time, within one pass; then it is left to the next pass. */
const DROP_TRIES = 8;
const DROP_RETRY_PAUSE_MS = 250;
/** SQLSTATE of a lock not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';
/** How long the check for a running firing in a month may read. */
const RUNNING_CHECK_TIMEOUT = '5min';
/** The session advisory lock that makes one pass at a time across the workers (any number, fixed). */
const RETENTION_LOCK = 7_710_000_001;

/** The parts of a pass, timed in its report. */
export type RetentionPhase = 'ahead' | 'checks' | 'locks' | 'drops' | 'files' | 'sides' | 'trims' | 'rests';

export interface RetentionReport {
  /** Partitions created ahead. */
  created: number;
  /** Partitions dropped, by name. */
  dropped: string[];
  /** Rows deleted from partitions that could not be dropped whole. */
  trimmed: number;
  /** True when the trim budget ran out with rows still past retention: the next pass comes TRIM_PAUSE_MS later. */
  unfinished: boolean;
  /** False when another worker held the pass. */
  ran: boolean;
  /**
   * Milliseconds spent in each part: creating the months ahead, checking the months past retention for rows
   * still in progress, waiting for the tables' locks (failed tries included), dropping (the catalog, under
   * the locks), the commit that removes the dropped months' files (after the locks are released: the file
   * system's time, which no statement of the engine waits for), deleting the side rows of dropped months,
   * trimming; and resting between the checks and after the drops (PACE_REST_RATIO), not the database's time.
   */
  phasesMs: Record<RetentionPhase, number>;
}

/**
 * The trimming time left to a pass; `used` once one of its trim statements removed rows. Until then every
 * statement runs, so each pass removes something while rows are left (one finding nothing does not count).
 */
interface TrimBudget {
  ms: number;
  /** When the pass's trimming must stop: set by its first trim statement (the drops before it do not count). */
  until?: number;
  used: boolean;
}

/** A dropped partition, and the names dropped with it (its children's months, then its own). */
interface Dropped {
  partition: Partition;
  names: string[];
}

interface Partition {
  name: string;
  /** Lower and upper bound of its id range; null for the DEFAULT partition. */
  from: string | null;
  to: string | null;
}

/** The smallest UUIDv7 of a millisecond (as SQL's uuid_v7_floor). */
function uuidFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/**
 * Execution data retention (EXECUTION_RETENTION, `organizations.execution_retention_ms`): each pass
 * creates the monthly partitions ahead, drops every partition wholly older than the longest retention
 * any organization has (none while one keeps everything) unless it still holds a running execution,
 * and trims the rest (the edge partition, the default partition, partitions an organization with a
 * shorter retention has rows in, a partition kept for a running row) in batches of TRIM_BATCH, for at
 * most TRIM_BUDGET_MS per pass.
 *
 * No rollup moves: a partition drop fires no trigger, and the trims delete from the partition itself,
 * where the parent's statement-level rollup triggers do not fire (the change logs record inserts and
 * updates only through the parent). So the analytics over the removed period stay as they were.
 */
@Injectable()
export class ExecutionRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ExecutionRetention.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(FIRST_PASS_AFTER_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      let next = RETENTION_EVERY_MS;
      this.running = this.prune()
        .then((report) => {
          if (report.unfinished) next = TRIM_PAUSE_MS;
          if (report.dropped.length === 0 && report.trimmed === 0) return;
          const phases = Object.entries(report.phasesMs).map(([phase, ms]) => `${phase} ${Math.round(ms)}`);
          this.logger.log(
            `Retention pass: ${report.dropped.length} partitions dropped, ${report.trimmed} rows trimmed${report.unfinished ? ' (more in the next pass)' : ''}; ms: ${phases.join(', ')}`,
          );
        })
        .catch((e: Error) => this.logger.warn(`Retention pass failed (retried on the next): ${e.message}`))
        .finally(() => this.schedule(next));
    }, delayMs);
    this.timer.unref();
  }

  /** One pass over every partitioned table, at `now` (milliseconds; tests pass their own), trimming for at most `trimBudgetMs`. */
  async prune(now = Date.now(), trimBudgetMs = TRIM_BUDGET_MS): Promise<RetentionReport> {
    const report: RetentionReport = {
      created: 0,
      dropped: [],
      trimmed: 0,
      unfinished: false,
      ran: false,
      phasesMs: { ahead: 0, checks: 0, locks: 0, drops: 0, files: 0, sides: 0, trims: 0, rests: 0 },
    };
    const budget: TrimBudget = { ms: trimBudgetMs, used: false };
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = (await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [RETENTION_LOCK])) as { locked: boolean }[];
      if (!locked) return report;
      report.ran = true;
      try {
        for (const group of PARTITIONED_GROUPS) await this.pruneGroup(runner, group, now, report, budget);
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [RETENTION_LOCK]);
      }
      return report;
    } finally {
      await runner.release();
    }
  }

  private async pruneGroup(runner: QueryRunner, group: PartitionedGroup, now: number, report: RetentionReport, budget: TrimBudget): Promise<void> {
    for (const table of [group.table, ...group.children.map((c) => c.table)]) {
      try {
        const [{ made }] = (await this.timed(report, 'ahead', () =>
          runner.query(
            `SELECT retention_partitions_ensure($1, to_timestamp($2 / 1000.0), to_timestamp($2 / 1000.0) + make_interval(months => $3)) AS made`,
            [table, now, MONTHS_AHEAD],
          ),
        )) as { made: number }[];
        report.created += made;
      } catch (error) {
        // The default partition holds rows of that month (the loop was stopped for months): they stay there.
        this.logger.warn(`Could not create the partitions ahead of ${table}: ${(error as Error).message}`);
      }
    }
    // The effective retention of every organization: its own, else the service's (0 and off: keep all).
    const [span] = (await runner.query(
      `SELECT bool_or(o.retention_ms IS NULL) AS keeps_all, max(o.retention_ms)::text AS longest, min(o.retention_ms)::text AS shortest
         FROM (${executionRetentionsSql('$1')}) o`,
      [this.config.executionRetentionMs],
    )) as { keeps_all: boolean | null; longest: string | null; shortest: string | null }[];
    if (span.shortest === null) return; // no organization removes anything
    const partitions = await this.partitionsOf(runner, group.table);
    const childPartitions = new Map<string, Set<string>>();
    for (const child of group.children) childPartitions.set(child.table, new Set((await this.partitionsOf(runner, child.table)).map((p) => p.name)));

    const dropBefore = span.keeps_all ? null : uuidFloor(now - Number(span.longest));
    const past = partitions.filter((p) => dropBefore !== null && p.to !== null && p.to <= dropBefore);
    const outcome = past.length > 0 ? await this.drop(runner, group, past, childPartitions, report) : [];
    // Months whose drop waits for the next pass are not trimmed meanwhile: a month goes whole, not row by row.
    const gone = outcome === 'deferred' ? [] : outcome;
    const untouched = outcome === 'deferred' ? past : gone.map((g) => g.partition);
    const kept = partitions.filter((p) => !untouched.includes(p));
    for (const { partition, names } of gone) {
      report.dropped.push(...names);
      for (const side of group.sides) await this.timed(report, 'sides', () => this.deleteSideRange(runner, side, partition));
    }
    const trimBefore = uuidFloor(now - Number(span.shortest));
    for (const p of kept) {
      if (p.from !== null && p.from >= trimBefore) continue;
      const { count, done } = await this.timed(report, 'trims', () => this.trim(runner, group, p, childPartitions, now, trimBefore, budget));
      report.trimmed += count;
      if (!done) report.unfinished = true;
    }
  }

  /** A child's partition of the parent's partition `p` (same bounds, same suffix), else the child's DEFAULT partition. */
  private childPartition(group: PartitionedGroup, child: string, p: Partition, childPartitions: Map<string, Set<string>>): string {
    const name = `${child}${p.name.slice(group.table.length)}`;
    return childPartitions.get(child)?.has(name) ? name : `${child}_default`;
  }

  private async partitionsOf(runner: QueryRunner, table: string): Promise<Partition[]> {
    const rows = (await runner.query(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
      [table],
    )) as { name: string; bound: string }[];
    return rows.map(({ name, bound }) => {
      const range = /FROM \('([0-9a-f-]{36})'\) TO \('([0-9a-f-]{36})'\)/.exec(bound);
      return { name, from: range?.[1] ?? null, to: range?.[2] ?? null };
    });
  }

  /**
   * Drops the partitions wholly past retention, and their children's partitions of the same months first,
   * all in one transaction: the group's tables are locked once per pass, not once per month. A month that
   * holds a running execution is left out (it is trimmed around that row instead). A short lock timeout:
   * the exclusive locks queue the engine's writes for as long as they are held or waited for. 'deferred'
   * when the locks were not granted (or the drop failed): the months wait, untrimmed, for the next pass.
   */
  private async drop(
    runner: QueryRunner,
    group: PartitionedGroup,
    past: Partition[],
    childPartitions: Map<string, Set<string>>,
    report: RetentionReport,
  ): Promise<Dropped[] | 'deferred'> {
    let idle: Partition[];
    try {
      idle = await this.idleMonths(runner, group, past, childPartitions, report);
    } catch (error) {
      this.logger.warn(`${group.table}: months not checked, so not dropped (next pass): ${(error as Error).message}`);
      return 'deferred';
    }
    if (idle.length === 0) return [];
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      const outcome = await this.dropOnce(runner, group, idle, childPartitions, report);
      if (outcome !== 'locked') {
        await this.rest(report, performance.now() - started);
        return outcome;
      }
      if (attempt === DROP_TRIES) {
        this.logger.warn(`${group.table}: ${idle.length} months not dropped (next pass): its tables stayed busy for ${DROP_TRIES} tries of ${DROP_LOCK_TIMEOUT}`);
        return 'deferred';
      }
      await new Promise((resolve) => setTimeout(resolve, DROP_RETRY_PAUSE_MS));
    }
  }

  /**
   * The months of `past` holding no row still in progress, each checked in a short transaction of its own
   * (the check reads a month until its first such row, the whole month when there is none: beyond the
   * service's per-statement limit on a large month), resting after each. The check locks no row, as when it
   * ran in the drop's transaction: a row that comes back into progress between the check and the drop goes
   * with its month.
   */
  private async idleMonths(
    runner: QueryRunner,
    group: PartitionedGroup,
    past: Partition[],
    childPartitions: Map<string, Set<string>>,
    report: RetentionReport,
  ): Promise<Partition[]> {
    const idle: Partition[] = [];
    for (const p of past) {
      const busySql = group.busy(p.name, p.to as string, (child) => this.childPartition(group, child, p, childPartitions));
      const started = performance.now();
      const busy = await this.timed(report, 'checks', async () => {
        await runner.startTransaction();
        try {
          await runner.query(`SET LOCAL statement_timeout = '${RUNNING_CHECK_TIMEOUT}'`);
          const [row] = (await runner.query(`SELECT ${busySql} AS busy`)) as { busy: boolean }[];
          await runner.commitTransaction();
          return row.busy;
        } catch (error) {
          await runner.rollbackTransaction();
          throw error;
        }
      });
      if (!busy) idle.push(p);
      await this.rest(report, performance.now() - started);
    }
    return idle;
  }

  /** One try of drop(): 'locked' when the tables' locks were not granted within DROP_LOCK_TIMEOUT. */
  private async dropOnce(
    runner: QueryRunner,
    group: PartitionedGroup,
    idle: Partition[],
    childPartitions: Map<string, Set<string>>,
    report: RetentionReport,
  ): Promise<Dropped[] | 'locked' | 'deferred'> {
    await runner.startTransaction();
    try {
      await runner.query(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
      // Every table of the group at once, the parent first (a partition's drop takes its parent's exclusive lock):
      // not one table held while the next is waited for.
      const tables = [group.table, ...group.children.map((c) => c.table)];
      await this.timed(report, 'locks', () => runner.query(`LOCK TABLE ${tables.map((t) => `ONLY "${t}"`).join(', ')} IN ACCESS EXCLUSIVE MODE`));
      // Dropped while attached, never detached first: a detached month keeps its own copies of the parent's
      // foreign keys, and detaching or dropping it locks the tables they refer to (customers, workflows,
      // organizations), which every inbound message and run writes.
      const dropped: Dropped[] = idle.map((p) => ({
        partition: p,
        names: [
          ...group.children
            .map((child) => ({ child, name: `${child.table}${p.name.slice(group.table.length)}` }))
            .filter(({ child, name }) => childPartitions.get(child.table)?.has(name))
            .map(({ name }) => name),
          p.name,
        ],
      }));
      await this.timed(report, 'drops', () => runner.query(`DROP TABLE ${dropped.flatMap((d) => d.names).map((name) => `"${name}"`).join(', ')}`));
      // The commit removes the months' files, after it has released the locks: the engine waits for none of it.
      await this.timed(report, 'files', () => runner.commitTransaction());
      return dropped;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return 'locked';
      this.logger.warn(`${group.table}: months not dropped (next pass): ${(error as Error).message}`);
      return 'deferred';
    }
  }

  /**
   * Rests PACE_REST_RATIO times as long as a step that took `ms` (less once the service stops): the pass's
   * heavy steps then take about a tenth of one connection's time, whatever the machine.
   */
  private async rest(report: RetentionReport, ms: number): Promise<void> {
    const until = performance.now() + ms * PACE_REST_RATIO;
    const started = performance.now();
    while (!this.stopped && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, Math.min(100, until - performance.now())));
    report.phasesMs.rests += performance.now() - started;
  }

  /** Runs `work`, adding its time to the report's `phase`. */
  private async timed<T>(report: RetentionReport, phase: RetentionPhase, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      report.phasesMs[phase] += performance.now() - started;
    }
  }

  /** Deletes a side table's rows keyed into a dropped partition's range, in batches. */
  private async deleteSideRange(runner: QueryRunner, side: { table: string; key: string }, p: Partition): Promise<void> {
    for (;;) {
      const [, count] = (await runner.query(
        `DELETE FROM ${side.table} WHERE ${side.key} IN (SELECT ${side.key} FROM ${side.table} WHERE ${side.key} >= $1::uuid AND ${side.key} < $2::uuid LIMIT ${TRIM_BATCH})`,
        [p.from, p.to],
      )) as [unknown, number];
      if (count < TRIM_BATCH || this.stopped) return;
    }
  }

  /**
   * Deletes, from the partition itself, the finished rows of each organization older than its retention, in
   * batches; in the same statement, their children's rows (from the children's partitions of the same month)
   * and side rows. Deleting from partitions fires none of the parents' statement triggers: nothing is logged.
   * Stops at the pass's budget (`done` false: rows may be left).
   */
  private async trim(
    runner: QueryRunner,
    group: PartitionedGroup,
    p: Partition,
    childPartitions: Map<string, Set<string>>,
    now: number,
    trimBefore: string,
    budget: TrimBudget,
  ): Promise<{ count: number; done: boolean }> {
    const along = [
      ...group.children.map((c, i) => `, c${i} AS (DELETE FROM ONLY "${this.childPartition(group, c.table, p, childPartitions)}" WHERE ${c.key} IN (SELECT id FROM gone))`),
      // The bounds let a side table's index on its time-ordered key (a BRIN one too) find the batch's range.
      ...group.sides.map(
        (s, i) =>
          `, s${i} AS (DELETE FROM ${s.table} WHERE ${s.key} IN (SELECT id FROM gone)
                         AND ${s.key} >= (SELECT id FROM gone ORDER BY id LIMIT 1) AND ${s.key} <= (SELECT id FROM gone ORDER BY id DESC LIMIT 1))`,
      ),
    ].join('\n');
    let total = 0;
    for (;;) {
      budget.until ??= performance.now() + budget.ms;
      if (budget.used && performance.now() >= budget.until) return { count: total, done: false };
      const [{ count }] = (await runner.query(
        `WITH gone AS (
           DELETE FROM ONLY "${p.name}" WHERE id IN (
             SELECT t.id FROM ONLY "${p.name}" t JOIN (${executionRetentionsSql('$3')}) o ON o.organization_id = t.organization_id
              WHERE t.id < $1::uuid AND NOT ${group.held('t')}
                AND t.id < uuid_v7_floor(to_timestamp($2 / 1000.0) - make_interval(secs => o.retention_ms / 1000.0))
              ORDER BY t.id LIMIT ${TRIM_BATCH})
           RETURNING id)
         ${along}
         SELECT count(*)::int AS count FROM gone`,
        [trimBefore, now, this.config.executionRetentionMs],
      )) as { count: number }[];
      total += count;
      if (count > 0) budget.used = true;
      if (count < TRIM_BATCH) return { count: total, done: true };
      if (this.stopped) return { count: total, done: false };
    }
  }
}
