import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hourly rollups of workflow executions and trigger executions, so that metrics read a few rows
 * per hour of the period instead of every execution started in it (and every message of those):
 *
 * - `workflow_execution_hours` per workflow, hour its executions *started* (UTC) and channel
 *   (`unknown` when none): executions, successful, failed (running = the rest), duration sum and
 *   histogram of the finished ones, outbound/inbound messages of those executions.
 * - `trigger_execution_hours` the same per trigger, hour *fired* and the firing's channel.
 * - `workflow_customer_hours` / `trigger_customer_hours`: the exact set of customer ids per
 *   hour (with how many executions each), for distinct-customer counts over any union of hours.
 *
 * They are kept by statement-level triggers with transition tables on workflow_executions,
 * trigger_executions and messages: in the statement that writes the rows (the engine's firing,
 * run commit and inbound message statements, a test factory, a manual fix, a cascade), once per
 * statement for all its rows. An execution that finishes hours after it started moves its counts
 * within its start hour's row. Updates that change none of the counted columns (a wait, a
 * consumed reply) add nothing. Deletions only decrement rows (never insert: a cascade from the
 * workflow or trigger may already have removed them). Existing rows are backfilled under a share
 * lock so that no write slips between the backfill and the triggers.
 *
 * Transition-table joins to the base tables are written `= ANY (ARRAY[..])`: planned once with a
 * transition table of unknown size, a hash join could scan the whole table on every statement.
 */
export const HISTOGRAM_BOUNDS_MS = [100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 1800000, 3600000, 86400000];

/** `int[]` of the histogram's buckets: sums of `sign` over the finished rows of `d` falling in each. */
export function histogram(): string {
  const bucket = `width_bucket(duration_ms, ARRAY[${HISTOGRAM_BOUNDS_MS.join(', ')}])`;
  const cells = [];
  for (let i = 0; i <= HISTOGRAM_BOUNDS_MS.length; i++) {
    cells.push(`COALESCE(sum(sign) FILTER (WHERE status <> 'running' AND ${bucket} = ${i}), 0)::int`);
  }
  return `ARRAY[${cells.join(', ')}]`;
}

/** Rows `d(sign, parent, organization_id, workflow_id, at, channel, status, duration_ms, customer)` summed per parent, hour and channel. */
function grouped(parent: string, extra: string): string {
  return `
    SELECT parent AS ${parent}, organization_id${extra}, date_trunc('hour', at, 'UTC') AS hour, COALESCE(channel, 'unknown') AS channel,
           sum(sign)::int AS executions,
           COALESCE(sum(sign) FILTER (WHERE status = 'success'), 0)::int AS successful,
           COALESCE(sum(sign) FILTER (WHERE status = 'failed'), 0)::int AS failed,
           COALESCE(sum(sign * duration_ms::bigint) FILTER (WHERE status <> 'running'), 0)::bigint AS duration_sum,
           ${histogram()} AS duration_histogram
      FROM d GROUP BY parent, organization_id${extra}, date_trunc('hour', at, 'UTC'), COALESCE(channel, 'unknown')`;
}

export interface Rollup {
  /** The executions table and its parent (workflow, trigger). */
  table: string;
  parent: string;
  hours: string;
  customers: string;
  /** `workflow_id` for triggers' rollups (kept for analytics by workflow), else ''. */
  extra: string;
  /** The counted columns of a transition-table row `r`, as `d` names them. */
  columns: (r: string) => string;
  /** The columns whose change changes the counts. */
  counted: (r: string) => string;
}

export const WORKFLOW: Rollup = {
  table: 'workflow_executions',
  parent: 'workflow_id',
  hours: 'workflow_execution_hours',
  customers: 'workflow_customer_hours',
  extra: '',
  columns: (r) => `${r}.workflow_id AS parent, ${r}.organization_id, ${r}.started_at AS at, ${r}.channel, ${r}.status, ${r}.duration_ms, ${r}.customer_ref AS customer`,
  counted: (r) => `(${r}.workflow_id, ${r}.started_at, ${r}.channel, ${r}.status, ${r}.duration_ms, ${r}.customer_ref)`,
};

export const TRIGGER: Rollup = {
  table: 'trigger_executions',
  parent: 'trigger_id',
  hours: 'trigger_execution_hours',
  customers: 'trigger_customer_hours',
  extra: ', workflow_id',
  columns: (r) =>
    `${r}.trigger_id AS parent, ${r}.organization_id, ${r}.workflow_id, ${r}.triggered_at AS at, ${r}.input->>'channel' AS channel, ${r}.status, ` +
    `${r}.duration_ms, ${r}.input->>'customer_id' AS customer`,
  counted: (r) => `(${r}.trigger_id, ${r}.triggered_at, ${r}.input->>'channel', ${r}.status, ${r}.duration_ms, ${r}.input->>'customer_id')`,
};

/** The signed rows of a statement: +1 per new row, -1 per old one; an update only for rows whose counted columns changed. */
export function source(r: Rollup, op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  if (op === 'INSERT') return `SELECT 1 AS sign, ${r.columns('n')} FROM new_rows n`;
  if (op === 'DELETE') return `SELECT -1 AS sign, ${r.columns('o')} FROM old_rows o`;
  return `
    SELECT -1 AS sign, ${r.columns('o')} FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${r.counted('o')} IS DISTINCT FROM ${r.counted('n')}
    UNION ALL
    SELECT 1 AS sign, ${r.columns('n')} FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE ${r.counted('o')} IS DISTINCT FROM ${r.counted('n')}`;
}

export const SUMS = ['executions', 'successful', 'failed', 'duration_sum'];

/** The statements one trigger event runs: the counts, then the customer sets. */
function apply(r: Rollup, op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  const src = source(r, op);
  const cols = `${r.parent}, organization_id${r.extra}, hour, channel, ${SUMS.join(', ')}, duration_histogram`;
  const counts =
    op === 'DELETE'
      ? // Decrement only: the parent may be going away in the same cascade.
        `WITH d AS (${src}), g AS (${grouped(r.parent, r.extra)})
         UPDATE ${r.hours} h SET ${SUMS.map((c) => `${c} = h.${c} + g.${c}`).join(', ')},
                duration_histogram = rollup_histogram_add(h.duration_histogram, g.duration_histogram)
           FROM g WHERE h.${r.parent} = g.${r.parent} AND h.hour = g.hour AND h.channel = g.channel;`
      : // In key order, so that concurrent statements lock shared rows in the same order.
        `WITH d AS (${src}), g AS (${grouped(r.parent, r.extra)})
         INSERT INTO ${r.hours} AS h (${cols})
         SELECT ${cols} FROM g
          WHERE executions <> 0 OR successful <> 0 OR failed <> 0 OR duration_sum <> 0 OR duration_histogram <> ARRAY_FILL(0, ARRAY[${HISTOGRAM_BOUNDS_MS.length + 1}])
          ORDER BY ${r.parent}, hour, channel
         ON CONFLICT (${r.parent}, hour, channel) DO UPDATE
            SET ${SUMS.map((c) => `${c} = h.${c} + EXCLUDED.${c}`).join(', ')},
                duration_histogram = rollup_histogram_add(h.duration_histogram, EXCLUDED.duration_histogram);`;
  const customerDelta = `WITH d AS (${src})
    SELECT parent, date_trunc('hour', at, 'UTC') AS hour, customer, sum(sign)::int AS n FROM d WHERE customer IS NOT NULL
     GROUP BY parent, date_trunc('hour', at, 'UTC'), customer HAVING sum(sign) <> 0`;
  const customers =
    op === 'DELETE'
      ? `UPDATE ${r.customers} c SET executions = c.executions + g.n FROM (${customerDelta}) g
          WHERE c.${r.parent} = g.parent AND c.hour = g.hour AND c.customer = g.customer;`
      : `INSERT INTO ${r.customers} AS c (${r.parent}, hour, customer, executions)
         SELECT parent, hour, customer, n FROM (${customerDelta}) g ORDER BY parent, hour, customer
         ON CONFLICT (${r.parent}, hour, customer) DO UPDATE SET executions = c.executions + EXCLUDED.executions;`;
  // A set holds the customers with at least one execution in the hour.
  const prune =
    op === 'INSERT'
      ? ''
      : `DELETE FROM ${r.customers} WHERE executions <= 0 AND (${r.parent}, hour, customer) IN (SELECT parent, hour, customer FROM (${customerDelta}) g);`;
  return `${counts}\n${customers}\n${prune}`;
}

export function triggerFunction(r: Rollup): string {
  return `
    CREATE FUNCTION ${r.hours}_maintain() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        ${apply(r, 'INSERT')}
      ELSIF TG_OP = 'UPDATE' THEN
        ${apply(r, 'UPDATE')}
      ELSE
        ${apply(r, 'DELETE')}
      END IF;
      RETURN NULL;
    END
    $fn$`;
}

/** Message counts of the workflow rollup, in the hour and channel of the execution each message belongs to. */
function messageSource(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  const rows =
    op === 'INSERT'
      ? `SELECT 1 AS sign, execution_id, direction FROM new_rows WHERE execution_id IS NOT NULL`
      : op === 'DELETE'
        ? `SELECT -1 AS sign, execution_id, direction FROM old_rows WHERE execution_id IS NOT NULL`
        : `SELECT -1 AS sign, o.execution_id, o.direction FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE o.execution_id IS NOT NULL AND (o.execution_id, o.direction) IS DISTINCT FROM (n.execution_id, n.direction)
           UNION ALL
           SELECT 1 AS sign, n.execution_id, n.direction FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE n.execution_id IS NOT NULL AND (o.execution_id, o.direction) IS DISTINCT FROM (n.execution_id, n.direction)`;
  return `
    SELECT e.workflow_id, e.organization_id, date_trunc('hour', e.started_at, 'UTC') AS hour, COALESCE(e.channel, 'unknown') AS channel,
           COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'outbound'), 0)::int AS sent,
           COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'inbound'), 0)::int AS received
      FROM (${rows}) m
      JOIN workflow_executions e ON e.id = ANY (ARRAY[m.execution_id])
     GROUP BY e.workflow_id, e.organization_id, date_trunc('hour', e.started_at, 'UTC'), COALESCE(e.channel, 'unknown')
    HAVING COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'outbound'), 0) <> 0 OR COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'inbound'), 0) <> 0`;
}

function messageApply(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  if (op === 'DELETE') {
    return `UPDATE workflow_execution_hours h SET messages_sent = h.messages_sent + g.sent, messages_received = h.messages_received + g.received
              FROM (${messageSource(op)}) g WHERE h.workflow_id = g.workflow_id AND h.hour = g.hour AND h.channel = g.channel;`;
  }
  return `INSERT INTO workflow_execution_hours AS h (workflow_id, organization_id, hour, channel, messages_sent, messages_received)
          SELECT workflow_id, organization_id, hour, channel, sent, received FROM (${messageSource(op)}) g ORDER BY workflow_id, hour, channel
          ON CONFLICT (workflow_id, hour, channel) DO UPDATE
             SET messages_sent = h.messages_sent + EXCLUDED.messages_sent, messages_received = h.messages_received + EXCLUDED.messages_received;`;
}

export const MESSAGES_FUNCTION = `
  CREATE FUNCTION workflow_execution_hours_messages() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${messageApply('INSERT')}
    ELSIF TG_OP = 'UPDATE' THEN
      ${messageApply('UPDATE')}
    ELSE
      ${messageApply('DELETE')}
    END IF;
    RETURN NULL;
  END
  $fn$`;

/**
 * A deleted execution's messages stay (their execution_id set to null by the foreign key's action,
 * after which no statement can tell whose they were): its messages leave its hour's counts first,
 * row by row, in a trigger named to fire before the foreign key's ("RI_ConstraintTrigger_…";
 * triggers of one event fire in name order). Executions are deleted only with their workflow in
 * practice, whose deletion this makes somewhat slower.
 */
export const FORGET_MESSAGES_FUNCTION = `
  CREATE FUNCTION workflow_execution_hours_forget_messages() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    UPDATE workflow_execution_hours h
       SET messages_sent = h.messages_sent - m.sent, messages_received = h.messages_received - m.received
      FROM (SELECT count(*) FILTER (WHERE direction = 'outbound')::int AS sent, count(*) FILTER (WHERE direction = 'inbound')::int AS received
              FROM messages WHERE execution_id = OLD.id) m
     WHERE (m.sent > 0 OR m.received > 0)
       AND h.workflow_id = OLD.workflow_id AND h.hour = date_trunc('hour', OLD.started_at, 'UTC') AND h.channel = COALESCE(OLD.channel, 'unknown');
    RETURN NULL;
  END
  $fn$`;

function triggers(table: string, fn: string, prefix: string): string[] {
  return [
    `CREATE TRIGGER ${prefix}_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
    `CREATE TRIGGER ${prefix}_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
    `CREATE TRIGGER ${prefix}_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
  ];
}

const HISTOGRAM_CELLS = HISTOGRAM_BOUNDS_MS.length + 1;

export class ExecutionRollups1764288000000 implements MigrationInterface {
  name = 'ExecutionRollups1764288000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION rollup_histogram_add(a int[], b int[]) RETURNS int[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT array_agg(COALESCE(x, 0) + COALESCE(y, 0) ORDER BY i) FROM unnest(a, b) WITH ORDINALITY AS u(x, y, i)
      $$`);
    const counters = `
        executions int NOT NULL DEFAULT 0,
        successful int NOT NULL DEFAULT 0,
        failed int NOT NULL DEFAULT 0,
        duration_sum bigint NOT NULL DEFAULT 0,
        -- Finished executions per duration bucket, bounds (ms): ${HISTOGRAM_BOUNDS_MS.join(', ')}.
        duration_histogram int[] NOT NULL DEFAULT ARRAY_FILL(0, ARRAY[${HISTOGRAM_CELLS}])`;
    await q.query(`
      CREATE TABLE workflow_execution_hours (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        channel varchar(32) NOT NULL,
        organization_id uuid NOT NULL,
        ${counters},
        messages_sent int NOT NULL DEFAULT 0,
        messages_received int NOT NULL DEFAULT 0,
        PRIMARY KEY (workflow_id, hour, channel)
      )`);
    await q.query(`
      CREATE TABLE trigger_execution_hours (
        trigger_id uuid NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        channel varchar(32) NOT NULL,
        organization_id uuid NOT NULL,
        workflow_id uuid NOT NULL,
        ${counters},
        PRIMARY KEY (trigger_id, hour, channel)
      )`);
    await q.query(`
      CREATE TABLE workflow_customer_hours (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        customer varchar(200) NOT NULL,
        executions int NOT NULL,
        PRIMARY KEY (workflow_id, hour, customer)
      )`);
    await q.query(`
      CREATE TABLE trigger_customer_hours (
        trigger_id uuid NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
        hour timestamptz NOT NULL,
        customer text NOT NULL,
        executions int NOT NULL,
        PRIMARY KEY (trigger_id, hour, customer)
      )`);
    await q.query(triggerFunction(WORKFLOW));
    await q.query(triggerFunction(TRIGGER));
    await q.query(MESSAGES_FUNCTION);
    await q.query(FORGET_MESSAGES_FUNCTION);

    // Backfill, then the triggers, with no write in between.
    await q.query(`LOCK TABLE workflow_executions, trigger_executions, messages IN SHARE MODE`);
    await q.query(`WITH d AS (${source(WORKFLOW, 'INSERT').replace('new_rows', 'workflow_executions')}), g AS (${grouped('workflow_id', '')})
      INSERT INTO workflow_execution_hours (workflow_id, organization_id, hour, channel, ${SUMS.join(', ')}, duration_histogram)
      SELECT workflow_id, organization_id, hour, channel, ${SUMS.join(', ')}, duration_histogram FROM g`);
    await q.query(`WITH d AS (${source(TRIGGER, 'INSERT').replace('new_rows', 'trigger_executions')}), g AS (${grouped('trigger_id', ', workflow_id')})
      INSERT INTO trigger_execution_hours (trigger_id, organization_id, workflow_id, hour, channel, ${SUMS.join(', ')}, duration_histogram)
      SELECT trigger_id, organization_id, workflow_id, hour, channel, ${SUMS.join(', ')}, duration_histogram FROM g`);
    await q.query(`
      UPDATE workflow_execution_hours h SET messages_sent = g.sent, messages_received = g.received
        FROM (SELECT e.workflow_id, date_trunc('hour', e.started_at, 'UTC') AS hour, COALESCE(e.channel, 'unknown') AS channel,
                     count(*) FILTER (WHERE m.direction = 'outbound')::int AS sent, count(*) FILTER (WHERE m.direction = 'inbound')::int AS received
                FROM messages m JOIN workflow_executions e ON e.id = m.execution_id
               GROUP BY 1, 2, 3) g
       WHERE h.workflow_id = g.workflow_id AND h.hour = g.hour AND h.channel = g.channel`);
    await q.query(`
      INSERT INTO workflow_customer_hours (workflow_id, hour, customer, executions)
      SELECT workflow_id, date_trunc('hour', started_at, 'UTC'), customer_ref, count(*)::int FROM workflow_executions
       WHERE customer_ref IS NOT NULL GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO trigger_customer_hours (trigger_id, hour, customer, executions)
      SELECT trigger_id, date_trunc('hour', triggered_at, 'UTC'), input->>'customer_id', count(*)::int FROM trigger_executions
       WHERE input->>'customer_id' IS NOT NULL GROUP BY 1, 2, 3`);

    for (const statement of [
      ...triggers('workflow_executions', 'workflow_execution_hours_maintain', 'workflow_executions_rollup'),
      ...triggers('trigger_executions', 'trigger_execution_hours_maintain', 'trigger_executions_rollup'),
      ...triggers('messages', 'workflow_execution_hours_messages', 'messages_rollup'),
      `CREATE TRIGGER "A_workflow_executions_rollup_forget_messages" AFTER DELETE ON workflow_executions
         FOR EACH ROW EXECUTE FUNCTION workflow_execution_hours_forget_messages()`,
    ]) {
      await q.query(statement);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS "A_workflow_executions_rollup_forget_messages" ON workflow_executions`);
    await q.query(`DROP FUNCTION IF EXISTS workflow_execution_hours_forget_messages()`);
    for (const [table, prefix] of [['workflow_executions', 'workflow_executions_rollup'], ['trigger_executions', 'trigger_executions_rollup'], ['messages', 'messages_rollup']]) {
      for (const op of ['insert', 'update', 'delete']) await q.query(`DROP TRIGGER IF EXISTS ${prefix}_${op} ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS workflow_execution_hours_messages()`);
    await q.query(`DROP FUNCTION IF EXISTS trigger_execution_hours_maintain()`);
    await q.query(`DROP FUNCTION IF EXISTS workflow_execution_hours_maintain()`);
    for (const table of ['trigger_customer_hours', 'workflow_customer_hours', 'trigger_execution_hours', 'workflow_execution_hours']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS rollup_histogram_add(int[], int[])`);
  }
}
