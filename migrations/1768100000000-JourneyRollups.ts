import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rollups for journeys and node performance (docs/DECISIONS.md "Analytics", "Journeys and
 * node figures"), so that a month or a year of a workflow's journey is a few
 * rows per UTC day instead of every execution and step:
 *
 * - `workflow_outcome_days` per workflow, UTC day the executions *started*, and outcome (status,
 *   stop node, error code, whether it waited at the stop node: the definitions below, which
 *   src/analytics/journey-facts.ts keeps for the reads):
 *   executions, and the sum and count of their durations. Totals, completions, drop-offs with
 *   their reasons, the executions waiting at (or expired at) a node, and the organization's
 *   most-executed workflow come from it.
 * - `workflow_node_days` per workflow, UTC day its execution started, node and node type: steps
 *   (one per execution and node: steps are unique per execution and node, so a node visited twice
 *   counts once, with its first visit's step), completed and failed steps, their duration sum.
 *
 * Kept by statement-level triggers of their own with transition tables (the existing rollup
 * trigger functions are untouched): on workflow_executions for the outcomes (one look at the old
 * and new rows tells whether an outcome changed — an update of other columns stops there — and
 * whether an execution moved to another workflow or UTC day, whose steps' rows then move too), on
 * execution_steps for the nodes (joined to their executions by `= ANY (ARRAY[..])`, found by
 * primary key; a statement with no step — the engine's commit fires it on every run — stops at one
 * check). A deleted execution's steps leave the node rows first, row by row, in a trigger named to
 * fire before the foreign key's cascade ("A_…" < "RI_ConstraintTrigger_…"): once the execution is
 * gone no statement can tell which workflow and day its steps counted in, and the steps trigger
 * skips steps whose execution is gone. Deletions only decrement (a cascade from the workflow may
 * already have removed the rows). Existing rows are backfilled under a share lock, so that no write
 * slips between the backfill and the triggers.
 *
 * Not followed: an update of `started_at` or `workflow_id` in the same statement that inserts or
 * deletes that execution's steps (the engine never changes either).
 */
/*
 * What one execution and one step contribute, as SQL over a row alias: frozen here as this
 * migration wrote them (src/analytics/journey-facts.ts holds the same definitions for the reads of
 * the partial days; a change there needs a new migration that rebuilds the rollups).
 */
function outcomeFacts(r: string): string {
  return `${r}.status::text AS status,
    (CASE WHEN ${r}.status = 'failed' THEN COALESCE(${r}.error->>'node_id', ${r}.state->>'cursor', '')
          WHEN ${r}.status = 'running' AND ${r}.waiting THEN COALESCE(${r}.state->>'cursor', '')
          ELSE '' END)::text AS stop_node,
    (CASE WHEN ${r}.status = 'failed' THEN COALESCE(${r}.error->>'code', 'UNKNOWN') ELSE '' END)::text AS code,
    ((${r}.status = 'running' AND ${r}.waiting) OR (${r}.status = 'failed' AND ${r}.error->>'code' IS NOT DISTINCT FROM 'CONVERSATION_TIMEOUT')) AS waits`;
}

/** The columns of an execution row whose change changes its outcome row (or moves its steps' rows). */
function outcomeCounted(r: string): string {
  return `(${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.status, ${r}.waiting, ${r}.error->>'node_id', ${r}.error->>'code', ${r}.state->>'cursor', ${r}.duration_ms)`;
}

/** The UTC day an execution (and so each of its steps) is counted in: the day it started. */
function dayOf(r: string): string {
  return `date_trunc('day', ${r}.started_at, 'UTC')`;
}

/** The counted columns of a step row. */
function stepCounted(r: string): string {
  return `(${r}.execution_id, ${r}.node_id, ${r}.type, ${r}.status, ${r}.duration_ms)`;
}

const OUTCOME_KEY = 'workflow_id, day, status, stop_node, code, waits';
const NODE_KEY = 'workflow_id, day, node_id, type';

/** Signed outcome rows of a transition table (or of the executions table, for the backfill). */
function outcomeRows(sign: string, r: string, from: string): string {
  return `SELECT ${sign} AS sign, ${r}.workflow_id, ${r}.organization_id, ${dayOf(r)} AS day, ${outcomeFacts(r)}, ${r}.duration_ms FROM ${from}`;
}

const OUTCOME_GROUPED = `
  SELECT workflow_id, organization_id, day, status, stop_node, code, waits,
         sum(sign)::int AS executions,
         COALESCE(sum(sign * duration_ms::bigint), 0)::bigint AS duration_sum,
         COALESCE(sum(sign) FILTER (WHERE duration_ms IS NOT NULL), 0)::int AS timed
    FROM d GROUP BY workflow_id, organization_id, day, status, stop_node, code, waits`;

function outcomeUpsert(src: string): string {
  // In key order, so that concurrent statements lock shared rows in the same order.
  return `
    WITH d AS (${src}), g AS (${OUTCOME_GROUPED})
    INSERT INTO workflow_outcome_days AS t (${OUTCOME_KEY}, organization_id, executions, duration_sum, timed)
    SELECT ${OUTCOME_KEY}, organization_id, executions, duration_sum, timed FROM g
     WHERE executions <> 0 OR duration_sum <> 0 OR timed <> 0
     ORDER BY ${OUTCOME_KEY}
    ON CONFLICT (${OUTCOME_KEY}) DO UPDATE
       SET executions = t.executions + EXCLUDED.executions, duration_sum = t.duration_sum + EXCLUDED.duration_sum, timed = t.timed + EXCLUDED.timed;`;
}

/** Signed node rows `d` of steps `s` whose execution row is `e`. */
function nodeRows(sign: string): string {
  return `SELECT ${sign} AS sign, e.workflow_id, e.organization_id, ${dayOf('e')} AS day, s.node_id, s.type, s.status, s.duration_ms`;
}

const NODE_GROUPED = `
  SELECT workflow_id, organization_id, day, node_id, type,
         sum(sign)::int AS steps,
         COALESCE(sum(sign) FILTER (WHERE status = 'completed'), 0)::int AS completed,
         COALESCE(sum(sign) FILTER (WHERE status = 'failed'), 0)::int AS failed,
         COALESCE(sum(sign * duration_ms::bigint), 0)::bigint AS duration_sum
    FROM d GROUP BY workflow_id, organization_id, day, node_id, type`;

function nodeUpsert(src: string): string {
  return `
    WITH d AS (${src}), g AS (${NODE_GROUPED})
    INSERT INTO workflow_node_days AS t (${NODE_KEY}, organization_id, steps, completed, failed, duration_sum)
    SELECT ${NODE_KEY}, organization_id, steps, completed, failed, duration_sum FROM g
     WHERE steps <> 0 OR completed <> 0 OR failed <> 0 OR duration_sum <> 0
     ORDER BY ${NODE_KEY}
    ON CONFLICT (${NODE_KEY}) DO UPDATE
       SET steps = t.steps + EXCLUDED.steps, completed = t.completed + EXCLUDED.completed, failed = t.failed + EXCLUDED.failed,
           duration_sum = t.duration_sum + EXCLUDED.duration_sum;`;
}

const NODE_DECREMENT = (src: string) => `
  WITH d AS (${src}), g AS (${NODE_GROUPED})
  UPDATE workflow_node_days t
     SET steps = t.steps + g.steps, completed = t.completed + g.completed, failed = t.failed + g.failed, duration_sum = t.duration_sum + g.duration_sum
    FROM g WHERE t.workflow_id = g.workflow_id AND t.day = g.day AND t.node_id = g.node_id AND t.type = g.type;`;

const MOVED = (o: string, n: string) => `(${o}.workflow_id, ${o}.organization_id, ${dayOf(o)}) IS DISTINCT FROM (${n}.workflow_id, ${n}.organization_id, ${dayOf(n)})`;

const EXECUTIONS_FUNCTION = `
  CREATE FUNCTION workflow_outcome_days_maintain() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    changed boolean;
    moved boolean;
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${outcomeUpsert(outcomeRows('1', 'n', 'new_rows n'))}
    ELSIF TG_OP = 'UPDATE' THEN
      -- One look at the pairs: did an outcome change, did an execution move to another workflow or day?
      SELECT COALESCE(bool_or(${outcomeCounted('o')} IS DISTINCT FROM ${outcomeCounted('n')}), false), COALESCE(bool_or(${MOVED('o', 'n')}), false)
        INTO changed, moved
        FROM old_rows o JOIN new_rows n ON n.id = o.id;
      IF changed THEN
        ${outcomeUpsert(`
          ${outcomeRows('-1', 'o', `old_rows o JOIN new_rows n ON n.id = o.id WHERE ${outcomeCounted('o')} IS DISTINCT FROM ${outcomeCounted('n')}`)}
          UNION ALL
          ${outcomeRows('1', 'n', `new_rows n JOIN old_rows o ON o.id = n.id WHERE ${outcomeCounted('o')} IS DISTINCT FROM ${outcomeCounted('n')}`)}`)}
      END IF;
      -- An execution moved to another workflow or day takes its steps' node rows along.
      IF moved THEN
        ${nodeUpsert(`
          WITH moved AS MATERIALIZED (
            SELECT o.id, o.workflow_id AS ow, o.organization_id AS o_org, ${dayOf('o')} AS od, n.workflow_id AS nw, n.organization_id AS n_org, ${dayOf('n')} AS nd
              FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${MOVED('o', 'n')}
          ), s AS (
            SELECT s.*, m.ow, m.o_org, m.od, m.nw, m.n_org, m.nd FROM execution_steps s JOIN moved m ON m.id = s.execution_id
             WHERE s.execution_id = ANY (ARRAY(SELECT id FROM moved))
          )
          SELECT -1 AS sign, ow AS workflow_id, o_org AS organization_id, od AS day, node_id, type, status, duration_ms FROM s
          UNION ALL
          SELECT 1, nw, n_org, nd, node_id, type, status, duration_ms FROM s`)}
      END IF;
    ELSE
      -- Decrement only: the workflow may be going away in the same cascade.
      WITH d AS (${outcomeRows('-1', 'o', 'old_rows o')}), g AS (${OUTCOME_GROUPED})
      UPDATE workflow_outcome_days t
         SET executions = t.executions + g.executions, duration_sum = t.duration_sum + g.duration_sum, timed = t.timed + g.timed
        FROM g WHERE t.workflow_id = g.workflow_id AND t.day = g.day AND t.status = g.status AND t.stop_node = g.stop_node
                 AND t.code = g.code AND t.waits = g.waits;
    END IF;
    RETURN NULL;
  END
  $fn$`;

const STEPS_FUNCTION = `
  CREATE FUNCTION workflow_node_days_maintain() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
      ${nodeUpsert(`${nodeRows('1')} FROM new_rows s JOIN workflow_executions e ON e.id = ANY (ARRAY[s.execution_id])`)}
    ELSIF TG_OP = 'UPDATE' THEN
      IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${stepCounted('o')} IS DISTINCT FROM ${stepCounted('n')}) THEN
        RETURN NULL;
      END IF;
      ${nodeUpsert(`
        ${nodeRows('-1')} FROM old_rows s JOIN new_rows n ON n.id = s.id JOIN workflow_executions e ON e.id = ANY (ARRAY[s.execution_id])
         WHERE ${stepCounted('s')} IS DISTINCT FROM ${stepCounted('n')}
        UNION ALL
        ${nodeRows('1')} FROM new_rows s JOIN old_rows o ON o.id = s.id JOIN workflow_executions e ON e.id = ANY (ARRAY[s.execution_id])
         WHERE ${stepCounted('o')} IS DISTINCT FROM ${stepCounted('s')}`)}
    ELSE
      IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
      -- Steps whose execution is gone were taken out by workflow_node_days_forget_steps.
      ${NODE_DECREMENT(`${nodeRows('-1')} FROM old_rows s JOIN workflow_executions e ON e.id = ANY (ARRAY[s.execution_id])`)}
    END IF;
    RETURN NULL;
  END
  $fn$`;

const FORGET_STEPS_FUNCTION = `
  CREATE FUNCTION workflow_node_days_forget_steps() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    UPDATE workflow_node_days t
       SET steps = t.steps - g.steps, completed = t.completed - g.completed, failed = t.failed - g.failed, duration_sum = t.duration_sum - g.duration_sum
      FROM (SELECT node_id, type, count(*)::int AS steps, (count(*) FILTER (WHERE status = 'completed'))::int AS completed,
                   (count(*) FILTER (WHERE status = 'failed'))::int AS failed, sum(duration_ms)::bigint AS duration_sum
              FROM execution_steps WHERE execution_id = OLD.id GROUP BY node_id, type) g
     WHERE t.workflow_id = OLD.workflow_id AND t.day = ${dayOf('OLD')} AND t.node_id = g.node_id AND t.type = g.type;
    RETURN NULL;
  END
  $fn$`;

function statementTriggers(table: string, fn: string, prefix: string): string[] {
  return [
    `CREATE TRIGGER ${prefix}_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
    `CREATE TRIGGER ${prefix}_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
    `CREATE TRIGGER ${prefix}_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
  ];
}

export class JourneyRollups1768100000000 implements MigrationInterface {
  name = 'JourneyRollups1768100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workflow_outcome_days (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        day timestamptz NOT NULL,
        status varchar(16) NOT NULL,
        -- Where it stopped or waits ('' = none known): src/analytics/journey-facts.ts.
        stop_node text NOT NULL,
        -- A failed execution's error code, else ''.
        code text NOT NULL,
        -- Reached stop_node without a step there (waiting, or expired waiting).
        waits boolean NOT NULL,
        organization_id uuid NOT NULL,
        executions int NOT NULL DEFAULT 0,
        duration_sum bigint NOT NULL DEFAULT 0,
        -- Executions with a recorded duration (the finished ones).
        timed int NOT NULL DEFAULT 0,
        PRIMARY KEY (workflow_id, day, status, stop_node, code, waits)
      )`);
    // The organization's most-executed workflow of a period (journey_type=all). No counter in it:
    // an index on a column the triggers update would make every update a non-HOT one, adding an
    // index entry per statement to both indexes, which the next upserts of the same row must step over.
    await q.query(`CREATE INDEX idx_workflow_outcome_days_org_day ON workflow_outcome_days (organization_id, day, workflow_id)`);
    await q.query(`
      CREATE TABLE workflow_node_days (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        day timestamptz NOT NULL,
        node_id varchar(64) NOT NULL,
        type varchar(32) NOT NULL,
        organization_id uuid NOT NULL,
        steps int NOT NULL DEFAULT 0,
        completed int NOT NULL DEFAULT 0,
        failed int NOT NULL DEFAULT 0,
        duration_sum bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (workflow_id, day, node_id, type)
      )`);
    await q.query(EXECUTIONS_FUNCTION);
    await q.query(STEPS_FUNCTION);
    await q.query(FORGET_STEPS_FUNCTION);

    // Backfill, then the triggers, with no write in between.
    await q.query(`LOCK TABLE workflow_executions, execution_steps IN SHARE MODE`);
    await q.query(`
      WITH d AS (${outcomeRows('1', 'we', 'workflow_executions we')}), g AS (${OUTCOME_GROUPED})
      INSERT INTO workflow_outcome_days (${OUTCOME_KEY}, organization_id, executions, duration_sum, timed)
      SELECT ${OUTCOME_KEY}, organization_id, executions, duration_sum, timed FROM g`);
    await q.query(`
      WITH d AS (${nodeRows('1')} FROM execution_steps s JOIN workflow_executions e ON e.id = s.execution_id), g AS (${NODE_GROUPED})
      INSERT INTO workflow_node_days (${NODE_KEY}, organization_id, steps, completed, failed, duration_sum)
      SELECT ${NODE_KEY}, organization_id, steps, completed, failed, duration_sum FROM g`);

    for (const statement of [
      ...statementTriggers('workflow_executions', 'workflow_outcome_days_maintain', 'workflow_executions_journey'),
      ...statementTriggers('execution_steps', 'workflow_node_days_maintain', 'execution_steps_journey'),
      `CREATE TRIGGER "A_workflow_executions_journey_forget_steps" AFTER DELETE ON workflow_executions
         FOR EACH ROW EXECUTE FUNCTION workflow_node_days_forget_steps()`,
    ]) {
      await q.query(statement);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS "A_workflow_executions_journey_forget_steps" ON workflow_executions`);
    for (const [table, prefix] of [['workflow_executions', 'workflow_executions_journey'], ['execution_steps', 'execution_steps_journey']]) {
      for (const op of ['insert', 'update', 'delete']) await q.query(`DROP TRIGGER IF EXISTS ${prefix}_${op} ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS workflow_node_days_forget_steps()`);
    await q.query(`DROP FUNCTION IF EXISTS workflow_node_days_maintain()`);
    await q.query(`DROP FUNCTION IF EXISTS workflow_outcome_days_maintain()`);
    await q.query(`DROP TABLE IF EXISTS workflow_node_days`);
    await q.query(`DROP TABLE IF EXISTS workflow_outcome_days`);
  }
}
