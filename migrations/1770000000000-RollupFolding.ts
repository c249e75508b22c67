import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rollups kept from executions, firings, steps and messages leave the write path
 * (docs/DECISIONS.md, "Rollups folded off the write path"). Before, every statement that wrote
 * `workflow_executions`, `trigger_executions`, `execution_steps` or `messages` ran statement
 * triggers that upserted, row by row of the rollup keys, into a dozen tables (hours, days and
 * customer hours of executions and firings; duration days and months and error days; outcome and
 * node days; the message counts of the hours and days; the customers' 30-minute sessions and first
 * channels), locking the rows every execution of a workflow shares.
 *
 * Now each such statement appends its signed rows (+1 per new row, -1 per old one, and an update
 * only for rows whose counted columns changed) to a change log: `workflow_execution_changes`,
 * `workflow_outcome_changes`, `trigger_execution_changes`, `execution_step_changes` or
 * `message_changes` (a step's execution day and a message's execution hour and channel are read
 * when it is logged, as the old triggers did). One insert, no shared row. The form answers stay
 * synchronous, their checks moved into the executions' and steps' log functions (one trigger each
 * instead of two).
 * `rollups_fold(max_rows)` folds the oldest logged rows into the rollups with one grouped upsert per
 * table and deletes them, in one transaction (a fold that dies counts nothing; one that runs again
 * finds only what is left), under a transaction-level advisory lock (one folder at a time, so rows
 * are folded in the order they were logged and a customer set never sees a -1 before its +1). Rows
 * of a workflow or trigger deleted since are dropped: its rollup rows went with it. Sessions are
 * not summed: the sessions of each customer and channel a batch touched, around the touched times,
 * are built again from the messages themselves (the old trigger's path for out-of-order rows),
 * which gives the same sessions whatever the order or the number of folds.
 *
 * The workers fold continuously; a reader of these rollups first folds what is left, so figures are
 * exact at every moment. The functions of the old triggers stay, for `down`.
 */

const WORKFLOW_COUNTED = (r: string) =>
  `(${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.channel, ${r}.status, ${r}.duration_ms, ${r}.customer_ref, ${r}.error->>'code')`;
const TRIGGER_COUNTED = (r: string) =>
  `(${r}.trigger_id, ${r}.organization_id, ${r}.workflow_id, ${r}.triggered_at, ${r}.input->>'channel', ${r}.status, ${r}.duration_ms, ${r}.input->>'customer_id')`;

/** A workflow execution `r`'s outcome (migration JourneyRollups): its UTC day, status, stop node, code, whether it waits. */
const OUTCOME_VALUES = (r: string) => `${r}.workflow_id, ${r}.organization_id, date_trunc('day', ${r}.started_at, 'UTC'), ${r}.status,
  (CASE WHEN ${r}.status = 'failed' THEN COALESCE(${r}.error->>'node_id', ${r}.state->>'cursor', '')
        WHEN ${r}.status = 'running' AND ${r}.waiting THEN COALESCE(${r}.state->>'cursor', '')
        ELSE '' END),
  (CASE WHEN ${r}.status = 'failed' THEN COALESCE(${r}.error->>'code', 'UNKNOWN') ELSE '' END),
  ((${r}.status = 'running' AND ${r}.waiting) OR (${r}.status = 'failed' AND ${r}.error->>'code' IS NOT DISTINCT FROM 'CONVERSATION_TIMEOUT')),
  ${r}.duration_ms`;
const OUTCOME_COUNTED = (r: string) =>
  `(${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.status, ${r}.waiting, ${r}.error->>'node_id', ${r}.error->>'code', ${r}.state->>'cursor', ${r}.duration_ms)`;
const STEP_COLUMNS = 'sign, workflow_id, organization_id, day, node_id, type, status, duration_ms';

interface Log {
  source: string;
  table: string;
  fn: string;
  columns: string;
  /** The logged values of a transition-table row `r`, in `columns` order. */
  values: (r: string) => string;
  counted: (r: string) => string;
  /** The new triggers' name prefix (`…_insert`, `…_update`, `…_delete`): the old ones', so what disables or measures them still finds them. */
  prefix: string;
  /** More of the update branch, after the logging (checks kept in the same function instead of a trigger of their own). */
  onUpdate?: string;
  oldTriggers: string[];
  oldFunctions: string[];
}

const LOGS: Log[] = [
  {
    source: 'workflow_executions',
    table: 'workflow_execution_changes',
    fn: 'workflow_execution_changes_log',
    columns: 'sign, workflow_id, organization_id, started_at, channel, status, duration_ms, customer_ref, error_code',
    values: (r) => `${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.channel, ${r}.status, ${r}.duration_ms, ${r}.customer_ref, ${r}.error->>'code'`,
    counted: WORKFLOW_COUNTED,
    prefix: 'workflow_executions_rollup',
    // Migration EngagementRollups' execution_answers_executions, which had an update trigger of its own.
    onUpdate: `
      ids := ARRAY(
        SELECT n.id FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE (o.organization_id, o.customer_id, o.channel, o.started_at, o.workflow_id, o.workflow_version)
               IS DISTINCT FROM (n.organization_id, n.customer_id, n.channel, n.started_at, n.workflow_id, n.workflow_version));
      IF cardinality(ids) > 0 THEN
        PERFORM execution_answers_refresh(ids);
      END IF;`,
    oldTriggers: ['workflow_executions_rollup', 'workflow_executions_rollup_performance'],
    oldFunctions: ['workflow_execution_hours_maintain', 'workflow_duration_days_maintain'],
  },
  {
    source: 'workflow_executions',
    table: 'workflow_outcome_changes',
    fn: 'workflow_outcome_changes_log',
    columns: 'sign, workflow_id, organization_id, day, status, stop_node, code, waits, duration_ms',
    values: OUTCOME_VALUES,
    counted: OUTCOME_COUNTED,
    prefix: 'workflow_executions_journey',
    // An execution moved to another workflow or day takes its steps' node rows along (as migration JourneyRollups did).
    onUpdate: `
      WITH moved AS MATERIALIZED (
        SELECT o.id, o.workflow_id AS o_wf, o.organization_id AS o_org, date_trunc('day', o.started_at, 'UTC') AS o_day,
               n.workflow_id AS n_wf, n.organization_id AS n_org, date_trunc('day', n.started_at, 'UTC') AS n_day
          FROM old_rows o JOIN new_rows n ON n.id = o.id
         WHERE (o.workflow_id, o.organization_id, date_trunc('day', o.started_at, 'UTC')) IS DISTINCT FROM (n.workflow_id, n.organization_id, date_trunc('day', n.started_at, 'UTC'))
      ), s AS (
        SELECT s.node_id, s.type, s.status, s.duration_ms, m.* FROM execution_steps s JOIN moved m ON m.id = s.execution_id
         WHERE s.execution_id = ANY (ARRAY(SELECT id FROM moved))
      )
      INSERT INTO execution_step_changes (${STEP_COLUMNS})
      SELECT -1, o_wf, o_org, o_day, node_id, type, status, duration_ms FROM s
      UNION ALL
      SELECT 1, n_wf, n_org, n_day, node_id, type, status, duration_ms FROM s;`,
    oldTriggers: ['workflow_executions_journey'],
    oldFunctions: ['workflow_outcome_days_maintain'],
  },
  {
    source: 'trigger_executions',
    table: 'trigger_execution_changes',
    fn: 'trigger_execution_changes_log',
    columns: 'sign, trigger_id, organization_id, workflow_id, triggered_at, channel, status, duration_ms, customer',
    values: (r) =>
      `${r}.trigger_id, ${r}.organization_id, ${r}.workflow_id, ${r}.triggered_at, ${r}.input->>'channel', ${r}.status, ${r}.duration_ms, ${r}.input->>'customer_id'`,
    counted: TRIGGER_COUNTED,
    prefix: 'trigger_executions_rollup',
    oldTriggers: ['trigger_executions_rollup'],
    oldFunctions: ['trigger_execution_hours_maintain'],
  },
];

const LOG_TABLES = [
  `CREATE TABLE workflow_execution_changes (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     sign smallint NOT NULL,
     workflow_id uuid NOT NULL,
     organization_id uuid NOT NULL,
     started_at timestamptz NOT NULL,
     channel varchar(32),
     status varchar(16) NOT NULL,
     duration_ms int,
     customer_ref varchar(200),
     error_code text
   )`,
  `CREATE TABLE trigger_execution_changes (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     sign smallint NOT NULL,
     trigger_id uuid NOT NULL,
     organization_id uuid NOT NULL,
     workflow_id uuid NOT NULL,
     triggered_at timestamptz NOT NULL,
     channel text,
     status varchar(16) NOT NULL,
     duration_ms int,
     customer text
   )`,
  `CREATE TABLE workflow_outcome_changes (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     sign smallint NOT NULL,
     workflow_id uuid NOT NULL,
     organization_id uuid NOT NULL,
     day timestamptz NOT NULL,
     status varchar(16) NOT NULL,
     stop_node text NOT NULL,
     code text NOT NULL,
     waits boolean NOT NULL,
     duration_ms int
   )`,
  // A step's side of the node rollups, with its execution's workflow and day as they were when it was logged.
  `CREATE TABLE execution_step_changes (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     sign smallint NOT NULL,
     workflow_id uuid NOT NULL,
     organization_id uuid NOT NULL,
     day timestamptz NOT NULL,
     node_id varchar(64) NOT NULL,
     type varchar(32) NOT NULL,
     status varchar(16),
     duration_ms int
   )`,
  // A message's side of the rollups: its customer, channel and time (sessions) and, when it belongs to an execution,
  // that execution's workflow, organization, start and channel as they were when it was logged (message counts).
  `CREATE TABLE message_changes (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     sign smallint NOT NULL,
     customer_id uuid,
     channel varchar(32),
     created_at timestamptz,
     direction varchar(8),
     workflow_id uuid,
     organization_id uuid,
     started_at timestamptz,
     execution_channel varchar(32)
   )`,
];

function logFunction(l: Log): string {
  return `
    CREATE FUNCTION ${l.fn}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
    DECLARE
      ids uuid[];
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO ${l.table} (${l.columns}) SELECT 1, ${l.values('n')} FROM new_rows n;
      ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO ${l.table} (${l.columns})
        SELECT -1, ${l.values('o')} FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${l.counted('o')} IS DISTINCT FROM ${l.counted('n')}
        UNION ALL
        SELECT 1, ${l.values('n')} FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE ${l.counted('o')} IS DISTINCT FROM ${l.counted('n')};
        ${l.onUpdate ?? ''}
      ELSE
        INSERT INTO ${l.table} (${l.columns}) SELECT -1, ${l.values('o')} FROM old_rows o;
      END IF;
      RETURN NULL;
    END
    $fn$`;
}

const OPS = ['insert', 'update', 'delete'];
const LOG_TABLE_NAMES = ['workflow_execution_changes', 'trigger_execution_changes', 'workflow_outcome_changes', 'execution_step_changes', 'message_changes'];

const triggerStatements = (table: string, prefix: string, fn: string) => [
  `CREATE TRIGGER ${prefix}_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
  `CREATE TRIGGER ${prefix}_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
  `CREATE TRIGGER ${prefix}_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
];

/** A step row `s` as logged: its execution's (by primary key) workflow, organization and UTC day, its node, type, status and duration. */
const STEP_VALUES = (s: string) =>
  `e.workflow_id, e.organization_id, date_trunc('day', e.started_at, 'UTC'), ${s}.node_id, ${s}.type, ${s}.status, ${s}.duration_ms`;
const STEP_EXECUTION = (s: string) => `JOIN workflow_executions e ON e.id = ANY (ARRAY[${s}.execution_id])`;
const STEP_COUNTED = (s: string) => `(${s}.execution_id, ${s}.node_id, ${s}.type, ${s}.status, ${s}.duration_ms)`;

/**
 * The steps' node rows, and (in the same function: one trigger instead of two) the form answers of
 * the executions whose form steps were written (migration EngagementRollups' execution_answers_steps).
 */
const STEP_LOG_FUNCTION = `
  CREATE FUNCTION execution_step_changes_log() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  DECLARE
    ids uuid[];
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO execution_step_changes (${STEP_COLUMNS}) SELECT 1, ${STEP_VALUES('s')} FROM new_rows s ${STEP_EXECUTION('s')};
      ids := ARRAY(SELECT DISTINCT execution_id FROM new_rows WHERE type = 'form');
    ELSIF TG_OP = 'UPDATE' THEN
      INSERT INTO execution_step_changes (${STEP_COLUMNS})
      SELECT -1, ${STEP_VALUES('s')} FROM old_rows s JOIN new_rows n ON n.id = s.id ${STEP_EXECUTION('s')} WHERE ${STEP_COUNTED('s')} IS DISTINCT FROM ${STEP_COUNTED('n')}
      UNION ALL
      SELECT 1, ${STEP_VALUES('s')} FROM new_rows s JOIN old_rows o ON o.id = s.id ${STEP_EXECUTION('s')} WHERE ${STEP_COUNTED('o')} IS DISTINCT FROM ${STEP_COUNTED('s')};
      ids := ARRAY(SELECT execution_id FROM new_rows WHERE type = 'form' UNION SELECT execution_id FROM old_rows WHERE type = 'form');
    ELSE
      -- Steps whose execution is gone were logged by execution_step_changes_forget_execution.
      INSERT INTO execution_step_changes (${STEP_COLUMNS}) SELECT -1, ${STEP_VALUES('s')} FROM old_rows s ${STEP_EXECUTION('s')};
      ids := ARRAY(SELECT DISTINCT execution_id FROM old_rows WHERE type = 'form');
    END IF;
    IF cardinality(ids) > 0 THEN
      PERFORM execution_answers_refresh(ids);
    END IF;
    RETURN NULL;
  END
  $fn$`;

/** A deleted execution's steps leave the node rows before the cascade removes them (row-level, as the function it replaces). */
const FORGET_STEPS_FUNCTION = `
  CREATE FUNCTION execution_step_changes_forget_execution() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  BEGIN
    INSERT INTO execution_step_changes (${STEP_COLUMNS})
    SELECT -1, OLD.workflow_id, OLD.organization_id, date_trunc('day', OLD.started_at, 'UTC'), s.node_id, s.type, s.status, s.duration_ms
      FROM execution_steps s WHERE s.execution_id = OLD.id;
    RETURN NULL;
  END
  $fn$`;

/** A message row `m` as logged: its session side, and its execution's (by primary key) when it has one. */
const MESSAGE_VALUES = (m: string) => `${m}.customer_id, ${m}.channel, ${m}.created_at, ${m}.direction, e.workflow_id, e.organization_id, e.started_at, e.channel`;
const MESSAGE_EXECUTION = (m: string) =>
  `LEFT JOIN LATERAL (SELECT x.workflow_id, x.organization_id, x.started_at, x.channel FROM workflow_executions x WHERE x.id = ${m}.execution_id) e ON true`;
/** The columns whose change moves a message between sessions or between executions' counts. */
const MESSAGE_COUNTED = (m: string) => `(${m}.customer_id, ${m}.channel, ${m}.created_at, ${m}.execution_id, ${m}.direction)`;
const MESSAGE_COLUMNS = 'sign, customer_id, channel, created_at, direction, workflow_id, organization_id, started_at, execution_channel';

const MESSAGE_LOG_FUNCTION = `
  CREATE FUNCTION message_changes_log() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO message_changes (${MESSAGE_COLUMNS}) SELECT 1, ${MESSAGE_VALUES('m')} FROM new_rows m ${MESSAGE_EXECUTION('m')};
    ELSIF TG_OP = 'UPDATE' THEN
      -- The engine marks inbound messages consumed once per run commit: that update stops at this check.
      IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${MESSAGE_COUNTED('o')} IS DISTINCT FROM ${MESSAGE_COUNTED('n')}) THEN
        RETURN NULL;
      END IF;
      INSERT INTO message_changes (${MESSAGE_COLUMNS})
      SELECT -1, ${MESSAGE_VALUES('m')} FROM old_rows m JOIN new_rows n ON n.id = m.id ${MESSAGE_EXECUTION('m')}
       WHERE ${MESSAGE_COUNTED('m')} IS DISTINCT FROM ${MESSAGE_COUNTED('n')}
      UNION ALL
      SELECT 1, ${MESSAGE_VALUES('m')} FROM new_rows m JOIN old_rows o ON o.id = m.id ${MESSAGE_EXECUTION('m')}
       WHERE ${MESSAGE_COUNTED('o')} IS DISTINCT FROM ${MESSAGE_COUNTED('m')};
    ELSE
      INSERT INTO message_changes (${MESSAGE_COLUMNS}) SELECT -1, ${MESSAGE_VALUES('m')} FROM old_rows m ${MESSAGE_EXECUTION('m')};
    END IF;
    RETURN NULL;
  END
  $fn$`;

/**
 * A deleted execution's messages leave its counts (before the deletion sets their execution_id to
 * null, which then finds no execution): row-level, as the function it replaces.
 */
const FORGET_MESSAGES_FUNCTION = `
  CREATE FUNCTION message_changes_forget_execution() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  BEGIN
    INSERT INTO message_changes (sign, direction, workflow_id, organization_id, started_at, execution_channel)
    SELECT -1, m.direction, OLD.workflow_id, OLD.organization_id, OLD.started_at, OLD.channel FROM messages m WHERE m.execution_id = OLD.id;
    RETURN NULL;
  END
  $fn$`;

/** The duration histogram's cells (bounds of migration ExecutionRollups, frozen here). */
const HISTOGRAM_BOUNDS_MS = [100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 1800000, 3600000, 86400000];
const HISTOGRAM = `ARRAY[${Array.from(
  { length: HISTOGRAM_BOUNDS_MS.length + 1 },
  (_, i) =>
    `COALESCE(sum(sign) FILTER (WHERE status <> 'running' AND width_bucket(duration_ms, ARRAY[${HISTOGRAM_BOUNDS_MS.join(', ')}]) = ${i}), 0)::int`,
).join(', ')}]`;
const ZERO_HISTOGRAM = `ARRAY_FILL(0, ARRAY[${HISTOGRAM_BOUNDS_MS.length + 1}])`;
const CHECKSUM = `COALESCE(sum(sign * (hashtextextended(customer, 0) & 2147483647)) FILTER (WHERE customer IS NOT NULL), 0)::bigint`;
const COUNTED = ['executions', 'successful', 'failed', 'duration_sum', 'customer_checksum'];

/**
 * The count upserts of one kind of rollup from the live rows `d(seq, sign, parent, organization_id,
 * workflow_id, at, channel, status, duration_ms, customer)`, one per grain, in key order.
 */
function countUpserts(parent: 'workflow_id' | 'trigger_id', hours: string, withWorkflow: boolean): string[] {
  return (['hour', 'day'] as const).map((unit) => {
    const table = unit === 'hour' ? hours : hours.replace('_hours', '_days');
    const extra = withWorkflow ? ', workflow_id' : '';
    const cols = `${parent}, organization_id${extra}, ${unit}, channel, ${COUNTED.join(', ')}, duration_histogram`;
    return `${unit}s_${parent} AS (
      INSERT INTO ${table} AS h (${cols})
      SELECT * FROM (
        SELECT parent, (array_agg(organization_id ORDER BY seq DESC))[1]${withWorkflow ? ', (array_agg(workflow_id ORDER BY seq DESC))[1]' : ''},
               date_trunc('${unit}', at, 'UTC'), COALESCE(channel, 'unknown'),
               sum(sign)::int,
               COALESCE(sum(sign) FILTER (WHERE status = 'success'), 0)::int,
               COALESCE(sum(sign) FILTER (WHERE status = 'failed'), 0)::int,
               COALESCE(sum(sign * duration_ms::bigint) FILTER (WHERE status <> 'running'), 0)::bigint,
               ${CHECKSUM},
               ${HISTOGRAM}
          FROM d GROUP BY parent, date_trunc('${unit}', at, 'UTC'), COALESCE(channel, 'unknown')
      ) g(${cols})
       WHERE executions <> 0 OR successful <> 0 OR failed <> 0 OR duration_sum <> 0 OR customer_checksum <> 0 OR duration_histogram <> ${ZERO_HISTOGRAM}
       ORDER BY ${parent}, ${unit}, channel
      ON CONFLICT (${parent}, ${unit}, channel) DO UPDATE
         SET ${COUNTED.map((c) => `${c} = h.${c} + EXCLUDED.${c}`).join(', ')},
             duration_histogram = rollup_histogram_add(h.duration_histogram, EXCLUDED.duration_histogram)
    )`;
  });
}

/** The customer sets' upsert; returns the rows left without executions, which the caller prunes. */
const customerUpsert = (parent: string, table: string) => `customers AS (
  INSERT INTO ${table} AS c (${parent}, hour, customer, executions)
  SELECT parent, date_trunc('hour', at, 'UTC'), customer, sum(sign)::int FROM d WHERE customer IS NOT NULL
   GROUP BY parent, date_trunc('hour', at, 'UTC'), customer HAVING sum(sign) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (${parent}, hour, customer) DO UPDATE SET executions = c.executions + EXCLUDED.executions
  RETURNING c.${parent} AS parent, c.hour, c.customer, c.executions
)`;

/** The performance rollups (migration PerformanceRollups) from the finished rows of `d`. */
const PERFORMANCE_UPSERTS = `
  durations AS MATERIALIZED (
    SELECT parent AS workflow_id, (array_agg(organization_id ORDER BY seq DESC))[1] AS organization_id, date_trunc('day', at, 'UTC') AS day,
           duration_bucket(duration_ms) AS bucket, sum(sign)::int AS n
      FROM d WHERE status <> 'running' AND duration_ms IS NOT NULL
     GROUP BY parent, date_trunc('day', at, 'UTC'), duration_bucket(duration_ms) HAVING sum(sign) <> 0
  ), duration_days AS (
    INSERT INTO workflow_duration_days AS h (workflow_id, day, bucket, organization_id, executions)
    SELECT workflow_id, day, bucket, organization_id, n FROM durations ORDER BY workflow_id, day, bucket
    ON CONFLICT (workflow_id, day, bucket) DO UPDATE SET executions = h.executions + EXCLUDED.executions
  ), duration_months AS (
    INSERT INTO workflow_duration_months AS h (workflow_id, month, bucket, organization_id, executions)
    SELECT workflow_id, date_trunc('month', day, 'UTC'), bucket, (array_agg(organization_id))[1], sum(n)::int FROM durations
     GROUP BY workflow_id, date_trunc('month', day, 'UTC'), bucket HAVING sum(n) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (workflow_id, month, bucket) DO UPDATE SET executions = h.executions + EXCLUDED.executions
  ), error_days AS (
    INSERT INTO workflow_error_days AS h (workflow_id, day, code, organization_id, failed)
    SELECT parent, date_trunc('day', at, 'UTC'), COALESCE(error_code, 'UNKNOWN'), (array_agg(organization_id ORDER BY seq DESC))[1], sum(sign)::int
      FROM d WHERE status = 'failed'
     GROUP BY parent, date_trunc('day', at, 'UTC'), COALESCE(error_code, 'UNKNOWN') HAVING sum(sign) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (workflow_id, day, code) DO UPDATE SET failed = h.failed + EXCLUDED.failed
  )`;

/** One log's fold: take the oldest rows, drop those of deleted parents, upsert every rollup, return the count and the emptied customer rows. */
function foldStatement(kind: 'workflow' | 'trigger'): string {
  const workflow = kind === 'workflow';
  const log = workflow ? 'workflow_execution_changes' : 'trigger_execution_changes';
  const parent = workflow ? 'workflow_id' : 'trigger_id';
  const parents = workflow ? 'workflows' : 'triggers';
  const columns = workflow
    ? `seq, sign, workflow_id AS parent, organization_id, workflow_id, started_at AS at, channel, status, duration_ms, customer_ref AS customer, error_code`
    : `seq, sign, trigger_id AS parent, organization_id, workflow_id, triggered_at AS at, channel, status, duration_ms, customer, NULL::text AS error_code`;
  const parts = [
    `taken AS MATERIALIZED (
       DELETE FROM ${log} l WHERE l.seq IN (SELECT seq FROM ${log} ORDER BY seq LIMIT p_max_rows)
       RETURNING ${columns}
     )`,
    `d AS MATERIALIZED (SELECT t.* FROM taken t WHERE EXISTS (SELECT 1 FROM ${parents} p WHERE p.id = t.parent))`,
    ...countUpserts(parent, workflow ? 'workflow_execution_hours' : 'trigger_execution_hours', !workflow),
    customerUpsert(parent, workflow ? 'workflow_customer_hours' : 'trigger_customer_hours'),
    ...(workflow ? [PERFORMANCE_UPSERTS] : []),
  ];
  return `
    WITH ${parts.join(',\n')}
    SELECT (SELECT count(*) FROM taken)::int,
           COALESCE((SELECT array_agg(parent) FROM customers WHERE executions <= 0), '{}'),
           COALESCE((SELECT array_agg(hour) FROM customers WHERE executions <= 0), '{}'),
           COALESCE((SELECT array_agg(customer) FROM customers WHERE executions <= 0), '{}')
      INTO v_taken, v_parents, v_hours, v_customers;
    IF cardinality(v_parents) > 0 THEN
      -- A set holds the customers with at least one execution in the hour.
      DELETE FROM ${workflow ? 'workflow_customer_hours' : 'trigger_customer_hours'} c
       USING unnest(v_parents, v_hours, v_customers) AS e(parent, hour, customer)
       WHERE c.${parent} = e.parent AND c.hour = e.hour AND c.customer = e.customer AND c.executions <= 0;
    END IF;
    v_folded := v_folded + v_taken;`;
}

/** The journey rollups (migration JourneyRollups): outcomes per workflow and day, steps per workflow, day, node and type. */
function journeyUpserts(): string {
  const fold = (log: string, table: string, key: string[], sums: [string, string][]) => `
    WITH taken AS MATERIALIZED (
      DELETE FROM ${log} l WHERE l.seq IN (SELECT seq FROM ${log} ORDER BY seq LIMIT p_max_rows)
      RETURNING l.*
    ), live AS (
      SELECT t.* FROM taken t WHERE EXISTS (SELECT 1 FROM workflows w WHERE w.id = t.workflow_id)
    ), g AS (
      SELECT ${key.join(', ')}, (array_agg(organization_id ORDER BY seq DESC))[1] AS organization_id, ${sums.map(([c, e]) => `${e} AS ${c}`).join(', ')}
        FROM live GROUP BY ${key.join(', ')}
    ), up AS (
      INSERT INTO ${table} AS t (${key.join(', ')}, organization_id, ${sums.map(([c]) => c).join(', ')})
      SELECT ${key.join(', ')}, organization_id, ${sums.map(([c]) => c).join(', ')} FROM g
       WHERE ${sums.map(([c]) => `${c} <> 0`).join(' OR ')}
       ORDER BY ${key.join(', ')}
      ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${sums.map(([c]) => `${c} = t.${c} + EXCLUDED.${c}`).join(', ')}
    )
    SELECT count(*)::int FROM taken INTO v_taken;
    v_folded := v_folded + v_taken;`;
  return [
    fold('workflow_outcome_changes', 'workflow_outcome_days', ['workflow_id', 'day', 'status', 'stop_node', 'code', 'waits'], [
      ['executions', 'sum(sign)::int'],
      ['duration_sum', 'COALESCE(sum(sign * duration_ms::bigint), 0)::bigint'],
      ['timed', 'COALESCE(sum(sign) FILTER (WHERE duration_ms IS NOT NULL), 0)::int'],
    ]),
    fold('execution_step_changes', 'workflow_node_days', ['workflow_id', 'day', 'node_id', 'type'], [
      ['steps', 'sum(sign)::int'],
      ['completed', "COALESCE(sum(sign) FILTER (WHERE status = 'completed'), 0)::int"],
      ['failed', "COALESCE(sum(sign) FILTER (WHERE status = 'failed'), 0)::int"],
      ['duration_sum', 'COALESCE(sum(sign * duration_ms::bigint), 0)::bigint'],
    ]),
  ].join('\n');
}

/** The message counts of the hours and days, from the logged messages of live workflows. */
function messageCountUpserts(): string {
  const write = (unit: 'hour' | 'day') => {
    const table = unit === 'hour' ? 'workflow_execution_hours' : 'workflow_execution_days';
    return `${unit}s AS (
      INSERT INTO ${table} AS h (workflow_id, organization_id, ${unit}, channel, messages_sent, messages_received)
      SELECT workflow_id, (array_agg(organization_id ORDER BY seq DESC))[1], date_trunc('${unit}', started_at, 'UTC'), COALESCE(execution_channel, 'unknown'),
             COALESCE(sum(sign) FILTER (WHERE direction = 'outbound'), 0)::int, COALESCE(sum(sign) FILTER (WHERE direction = 'inbound'), 0)::int
        FROM counted GROUP BY workflow_id, date_trunc('${unit}', started_at, 'UTC'), COALESCE(execution_channel, 'unknown')
       HAVING COALESCE(sum(sign) FILTER (WHERE direction = 'outbound'), 0) <> 0 OR COALESCE(sum(sign) FILTER (WHERE direction = 'inbound'), 0) <> 0
       ORDER BY 1, 3, 4
      ON CONFLICT (workflow_id, ${unit}, channel) DO UPDATE
         SET messages_sent = h.messages_sent + EXCLUDED.messages_sent, messages_received = h.messages_received + EXCLUDED.messages_received
    )`;
  };
  return `
    WITH taken AS MATERIALIZED (
      DELETE FROM message_changes l WHERE l.seq IN (SELECT seq FROM message_changes ORDER BY seq LIMIT p_max_rows)
      RETURNING l.*
    ), counted AS MATERIALIZED (
      SELECT t.* FROM taken t WHERE t.workflow_id IS NOT NULL AND EXISTS (SELECT 1 FROM workflows w WHERE w.id = t.workflow_id)
    ), ${write('hour')}, ${write('day')}, touched AS (
      SELECT customer_id, channel, min(created_at) AS lo, max(created_at) AS hi FROM taken WHERE customer_id IS NOT NULL GROUP BY customer_id, channel
    )
    SELECT (SELECT count(*) FROM taken)::int,
           COALESCE((SELECT array_agg(customer_id ORDER BY customer_id, channel) FROM touched), '{}'),
           COALESCE((SELECT array_agg(channel ORDER BY customer_id, channel) FROM touched), '{}'),
           COALESCE((SELECT array_agg(lo ORDER BY customer_id, channel) FROM touched), '{}'),
           COALESCE((SELECT array_agg(hi ORDER BY customer_id, channel) FROM touched), '{}')
      INTO v_taken, v_session_customers, v_session_channels, v_session_lo, v_session_hi;
    v_folded := v_folded + v_taken;`;
}

/**
 * The touched customers' sessions around the touched times, built again from their messages
 * (migration EngagementRollups' path for rows that do not extend the last session), then their
 * first session per channel.
 */
const SESSIONS_REBUILD = `
  IF cardinality(v_session_customers) > 0 THEN
    WITH k AS (
      SELECT * FROM unnest(v_session_customers, v_session_channels, v_session_lo, v_session_hi) AS k(customer_id, channel, lo, hi)
    ), gone AS (
      DELETE FROM customer_sessions s
       WHERE s.ctid = ANY (ARRAY(
         SELECT x.ctid FROM k CROSS JOIN LATERAL (
           SELECT ss.ctid FROM customer_sessions ss
            WHERE ss.customer_id = k.customer_id AND ss.channel = k.channel AND ss.ended_at > k.lo - interval '30 minutes' AND ss.started_at < k.hi + interval '30 minutes') x))
      RETURNING s.customer_id, s.channel, s.started_at, s.ended_at
    ), r AS (
      SELECT k.customer_id, k.channel, LEAST(k.lo, min(g.started_at)) AS lo, GREATEST(k.hi, max(g.ended_at)) AS hi
        FROM k LEFT JOIN gone g ON g.customer_id = k.customer_id AND g.channel = k.channel
       GROUP BY k.customer_id, k.channel, k.lo, k.hi
    ), m AS (
      SELECT msg.organization_id, r.customer_id, r.channel, msg.created_at,
             CASE WHEN msg.created_at - lag(msg.created_at) OVER (PARTITION BY r.customer_id, r.channel ORDER BY msg.created_at) < interval '30 minutes'
                  THEN 0 ELSE 1 END AS starts
        FROM r CROSS JOIN LATERAL (
          SELECT mm.organization_id, mm.created_at FROM messages mm
           WHERE mm.customer_id = r.customer_id AND mm.created_at >= r.lo AND mm.created_at <= r.hi AND mm.channel = r.channel) msg
    ), n AS (
      SELECT m.*, sum(starts) OVER (PARTITION BY customer_id, channel ORDER BY created_at ROWS UNBOUNDED PRECEDING) AS session FROM m
    )
    INSERT INTO customer_sessions (customer_id, channel, organization_id, started_at, ended_at, messages)
    SELECT customer_id, channel, organization_id, min(created_at), max(created_at), count(*)::int
      FROM n GROUP BY customer_id, channel, organization_id, session
     ORDER BY customer_id, channel, max(created_at);

    WITH p AS (
      SELECT DISTINCT customer_id, channel FROM unnest(v_session_customers, v_session_channels) AS p(customer_id, channel)
    ), f AS (
      SELECT p.customer_id, p.channel, x.organization_id, x.started_at AS first_at
        FROM p CROSS JOIN LATERAL (
          SELECT s.organization_id, s.started_at FROM customer_sessions s
           WHERE s.customer_id = p.customer_id AND s.channel = p.channel ORDER BY s.ended_at LIMIT 1) x
    ), gone AS (
      DELETE FROM customer_channels cc
       WHERE cc.ctid = ANY (ARRAY(
         SELECT x.ctid FROM p CROSS JOIN LATERAL (SELECT c2.ctid FROM customer_channels c2 WHERE c2.customer_id = p.customer_id AND c2.channel = p.channel) x
          WHERE NOT EXISTS (SELECT 1 FROM f WHERE f.customer_id = p.customer_id AND f.channel = p.channel)))
    )
    INSERT INTO customer_channels AS cc (customer_id, channel, organization_id, first_at)
    SELECT customer_id, channel, organization_id, first_at FROM f ORDER BY customer_id, channel
    ON CONFLICT (customer_id, channel) DO UPDATE SET first_at = EXCLUDED.first_at WHERE cc.first_at IS DISTINCT FROM EXCLUDED.first_at;
  END IF;`;

/** The advisory lock that makes folders take turns (a constant: 'rollups_fold' as a 64-bit key). */
export const FOLD_LOCK = 7_206_917_431_220_513_001n;

const FOLD_FUNCTION = `
  -- p_wait: readers wait for a fold in progress (they need its rows folded); a worker's loop does not (another
  -- worker is already folding: it skips its turn and answers 0).
  CREATE FUNCTION rollups_fold(p_max_rows int, p_wait boolean DEFAULT true) RETURNS int LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  DECLARE
    v_folded int := 0;
    v_taken int;
    v_parents uuid[];
    v_hours timestamptz[];
    v_customers text[];
    v_session_customers uuid[];
    v_session_channels text[];
    v_session_lo timestamptz[];
    v_session_hi timestamptz[];
  BEGIN
    -- Nothing logged: no lock, one probe of each log.
    IF NOT EXISTS (SELECT 1 FROM workflow_execution_changes) AND NOT EXISTS (SELECT 1 FROM trigger_execution_changes)
       AND NOT EXISTS (SELECT 1 FROM workflow_outcome_changes) AND NOT EXISTS (SELECT 1 FROM execution_step_changes)
       AND NOT EXISTS (SELECT 1 FROM message_changes) THEN
      RETURN 0;
    END IF;
    IF p_wait THEN
      PERFORM pg_advisory_xact_lock(${FOLD_LOCK});
    ELSIF NOT pg_try_advisory_xact_lock(${FOLD_LOCK}) THEN
      RETURN 0;
    END IF;
    ${foldStatement('workflow')}
    ${foldStatement('trigger')}
    ${journeyUpserts()}
    ${messageCountUpserts()}
    ${SESSIONS_REBUILD}
    RETURN v_folded;
  END
  $fn$`;

export class RollupFolding1770000000000 implements MigrationInterface {
  name = 'RollupFolding1770000000000';

  async up(q: QueryRunner): Promise<void> {
    // No write between dropping the old triggers and creating the log's.
    await q.query(`LOCK TABLE workflow_executions, trigger_executions, execution_steps, messages IN SHARE MODE`);
    for (const sql of LOG_TABLES) await q.query(sql);
    for (const table of LOG_TABLE_NAMES) {
      // A queue: rows live for about a second. Vacuum it often so that its index stays small.
      await q.query(`ALTER TABLE ${table} SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_threshold = 5000)`);
    }
    for (const l of LOGS) {
      for (const prefix of l.oldTriggers) for (const op of OPS) await q.query(`DROP TRIGGER ${prefix}_${op} ON ${l.source}`);
      await q.query(logFunction(l));
      for (const sql of triggerStatements(l.source, l.prefix, l.fn)) await q.query(sql);
    }
    // The answers' own triggers: their checks now run in the executions' and the steps' log functions.
    await q.query(`DROP TRIGGER workflow_executions_answers_update ON workflow_executions`);
    for (const prefix of ['execution_steps_journey', 'execution_steps_answers']) for (const op of OPS) await q.query(`DROP TRIGGER ${prefix}_${op} ON execution_steps`);
    await q.query(STEP_LOG_FUNCTION);
    for (const sql of triggerStatements('execution_steps', 'execution_steps_journey', 'execution_step_changes_log')) await q.query(sql);
    await q.query(`DROP TRIGGER "A_workflow_executions_journey_forget_steps" ON workflow_executions`);
    await q.query(FORGET_STEPS_FUNCTION);
    await q.query(`CREATE TRIGGER "A_workflow_executions_journey_forget_steps" AFTER DELETE ON workflow_executions
                   FOR EACH ROW EXECUTE FUNCTION execution_step_changes_forget_execution()`);
    for (const prefix of ['messages_rollup', 'messages_sessions']) for (const op of OPS) await q.query(`DROP TRIGGER ${prefix}_${op} ON messages`);
    await q.query(MESSAGE_LOG_FUNCTION);
    for (const sql of triggerStatements('messages', 'messages_rollup', 'message_changes_log')) await q.query(sql);
    await q.query(`DROP TRIGGER "A_workflow_executions_rollup_forget_messages" ON workflow_executions`);
    await q.query(FORGET_MESSAGES_FUNCTION);
    await q.query(`CREATE TRIGGER "A_workflow_executions_rollup_forget_messages" AFTER DELETE ON workflow_executions
                   FOR EACH ROW EXECUTE FUNCTION message_changes_forget_execution()`);
    await q.query(FOLD_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE workflow_executions, trigger_executions, execution_steps, messages IN SHARE MODE`);
    // Fold what is logged, then give the rollups back to the old triggers.
    await q.query(`DO $$ BEGIN WHILE rollups_fold(100000) > 0 LOOP END LOOP; END $$`);
    await q.query(`DROP FUNCTION rollups_fold(int, boolean)`);
    for (const l of LOGS) {
      for (const op of OPS) await q.query(`DROP TRIGGER ${l.prefix}_${op} ON ${l.source}`);
      await q.query(`DROP FUNCTION ${l.fn}()`);
      for (const [i, prefix] of l.oldTriggers.entries()) {
        for (const sql of triggerStatements(l.source, prefix, l.oldFunctions[i])) await q.query(sql);
      }
    }
    await q.query(`CREATE TRIGGER workflow_executions_answers_update AFTER UPDATE ON workflow_executions
                   REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION execution_answers_executions()`);
    for (const op of OPS) await q.query(`DROP TRIGGER execution_steps_journey_${op} ON execution_steps`);
    await q.query(`DROP FUNCTION execution_step_changes_log()`);
    for (const sql of triggerStatements('execution_steps', 'execution_steps_journey', 'workflow_node_days_maintain')) await q.query(sql);
    for (const sql of triggerStatements('execution_steps', 'execution_steps_answers', 'execution_answers_steps')) await q.query(sql);
    await q.query(`DROP TRIGGER "A_workflow_executions_journey_forget_steps" ON workflow_executions`);
    await q.query(`DROP FUNCTION execution_step_changes_forget_execution()`);
    await q.query(`CREATE TRIGGER "A_workflow_executions_journey_forget_steps" AFTER DELETE ON workflow_executions
                   FOR EACH ROW EXECUTE FUNCTION workflow_node_days_forget_steps()`);
    for (const op of OPS) await q.query(`DROP TRIGGER messages_rollup_${op} ON messages`);
    await q.query(`DROP FUNCTION message_changes_log()`);
    for (const sql of triggerStatements('messages', 'messages_rollup', 'workflow_execution_hours_messages')) await q.query(sql);
    for (const sql of triggerStatements('messages', 'messages_sessions', 'customer_sessions_maintain')) await q.query(sql);
    await q.query(`DROP TRIGGER "A_workflow_executions_rollup_forget_messages" ON workflow_executions`);
    await q.query(`DROP FUNCTION message_changes_forget_execution()`);
    await q.query(`CREATE TRIGGER "A_workflow_executions_rollup_forget_messages" AFTER DELETE ON workflow_executions
                   FOR EACH ROW EXECUTE FUNCTION workflow_execution_hours_forget_messages()`);
    for (const table of LOG_TABLE_NAMES) await q.query(`DROP TABLE ${table}`);
  }
}
