import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A workflow's satisfaction over a year read ~270,000 execution_answers rows (index-only, 31 ms of
 * the 365-day workflow analytics' 62–68 ms). `workflow_answer_days` sums them per workflow and UTC
 * day the executions started (docs/ARCHITECTURE.md, "Database triggers"): the
 * answered executions, the sum and count of their rating answers and their NPS promoters,
 * detractors and answers. A period is read as its whole UTC days from here and the partial days
 * at its ends from execution_answers (splitPeriod, way `nearest`), in any zone: the figures are
 * totals over the period's instants, never bucketed by local time.
 *
 * Kept by a statement-level trigger on execution_answers with transition tables, as the other day
 * rollups (migration PerformanceRollups): the signed rows of the statement grouped per key, upserted
 * in key order (concurrent statements lock shared rows in the same order), and on delete only
 * decremented (a cascade from the workflow may already have removed the day rows). An update
 * (execution_answers_refresh's upsert, which meets a conflict only under a concurrent refresh)
 * moves the old row's figures out and the new row's in. Backfilled under a share lock of
 * execution_answers so that no write slips between the backfill and the trigger. Its function plans
 * with sequential scans disabled (migration TriggerPlans: planned while the table is empty, a plan
 * would otherwise keep scanning it).
 */

/** The figures of rows `r` of execution_answers, with their sign and day. */
const COLUMNS = (r: string, sign: number) =>
  `${sign} AS sign, ${r}.workflow_id, ${r}.organization_id, date_trunc('day', ${r}.started_at, 'UTC') AS day, ${r}.rating_sum, ${r}.ratings, ${r}.promoters, ${r}.detractors, ${r}.nps_answers`;

function source(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  if (op === 'INSERT') return `SELECT ${COLUMNS('n', 1)} FROM new_rows n`;
  if (op === 'DELETE') return `SELECT ${COLUMNS('o', -1)} FROM old_rows o`;
  return `SELECT ${COLUMNS('o', -1)} FROM old_rows o UNION ALL SELECT ${COLUMNS('n', 1)} FROM new_rows n`;
}

/** Per workflow and day, the signed sums of the rows `d`; keys whose sums are all zero (an update that moved nothing) drop out. */
const GROUPED = `
  SELECT workflow_id, day, min(organization_id::text)::uuid AS organization_id, sum(sign)::int AS answered,
         sum(sign * rating_sum)::float8 AS rating_sum, sum(sign * ratings)::int AS ratings, sum(sign * promoters)::int AS promoters,
         sum(sign * detractors)::int AS detractors, sum(sign * nps_answers)::int AS nps_answers
    FROM d GROUP BY workflow_id, day
  HAVING sum(sign) <> 0 OR sum(sign * rating_sum) <> 0 OR sum(sign * ratings) <> 0 OR sum(sign * promoters) <> 0
      OR sum(sign * detractors) <> 0 OR sum(sign * nps_answers) <> 0`;

function apply(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  if (op === 'DELETE') {
    return `WITH d AS (${source(op)})
      UPDATE workflow_answer_days h SET answered = h.answered + g.answered, rating_sum = h.rating_sum + g.rating_sum, ratings = h.ratings + g.ratings,
             promoters = h.promoters + g.promoters, detractors = h.detractors + g.detractors, nps_answers = h.nps_answers + g.nps_answers
        FROM (${GROUPED}) g
       WHERE h.workflow_id = g.workflow_id AND h.day = g.day;`;
  }
  return `WITH d AS (${source(op)})
    INSERT INTO workflow_answer_days AS h (workflow_id, day, organization_id, answered, rating_sum, ratings, promoters, detractors, nps_answers)
    SELECT workflow_id, day, organization_id, answered, rating_sum, ratings, promoters, detractors, nps_answers FROM (${GROUPED}) g
     ORDER BY workflow_id, day
    ON CONFLICT (workflow_id, day) DO UPDATE SET answered = h.answered + EXCLUDED.answered, rating_sum = h.rating_sum + EXCLUDED.rating_sum,
      ratings = h.ratings + EXCLUDED.ratings, promoters = h.promoters + EXCLUDED.promoters, detractors = h.detractors + EXCLUDED.detractors,
      nps_answers = h.nps_answers + EXCLUDED.nps_answers;`;
}

const MAINTAIN = `
  CREATE FUNCTION workflow_answer_days_maintain() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
  BEGIN
    -- execution_answers_refresh deletes before it inserts: a statement without rows stops at one check.
    IF TG_OP = 'INSERT' THEN
      IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
      ${apply('INSERT')}
    ELSIF TG_OP = 'UPDATE' THEN
      IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
      ${apply('UPDATE')}
    ELSE
      IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
      ${apply('DELETE')}
    END IF;
    RETURN NULL;
  END
  $fn$`;

/** Named "…rollup…" like the other rollup triggers (bench/rollup-write-cost.mjs measures those). */
export const ANSWER_DAY_TRIGGERS = ['insert', 'update', 'delete'].map((op) => `execution_answers_rollup_days_${op}`);

export class AnswerDays1769100000000 implements MigrationInterface {
  name = 'AnswerDays1769100000000';

  async up(q: QueryRunner): Promise<void> {
    // No write between the backfill and the trigger that keeps what it filled.
    await q.query(`LOCK TABLE execution_answers IN SHARE MODE`);
    await q.query(`
      CREATE TABLE workflow_answer_days (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        -- The UTC midnight of the day the answered executions started.
        day timestamptz NOT NULL,
        organization_id uuid NOT NULL,
        answered int NOT NULL,
        rating_sum float8 NOT NULL,
        ratings int NOT NULL,
        promoters int NOT NULL,
        detractors int NOT NULL,
        nps_answers int NOT NULL,
        PRIMARY KEY (workflow_id, day)
      )`);
    await q.query(`
      INSERT INTO workflow_answer_days (workflow_id, day, organization_id, answered, rating_sum, ratings, promoters, detractors, nps_answers)
      SELECT workflow_id, day, organization_id, answered, rating_sum, ratings, promoters, detractors, nps_answers
        FROM (WITH d AS (${source('INSERT').replace('new_rows', 'execution_answers')}) ${GROUPED}) g`);
    await q.query(MAINTAIN);
    const [insert, update, del] = ANSWER_DAY_TRIGGERS;
    await q.query(`CREATE TRIGGER ${insert} AFTER INSERT ON execution_answers REFERENCING NEW TABLE AS new_rows
                   FOR EACH STATEMENT EXECUTE FUNCTION workflow_answer_days_maintain()`);
    await q.query(`CREATE TRIGGER ${update} AFTER UPDATE ON execution_answers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                   FOR EACH STATEMENT EXECUTE FUNCTION workflow_answer_days_maintain()`);
    await q.query(`CREATE TRIGGER ${del} AFTER DELETE ON execution_answers REFERENCING OLD TABLE AS old_rows
                   FOR EACH STATEMENT EXECUTE FUNCTION workflow_answer_days_maintain()`);
    await q.query(`ANALYZE workflow_answer_days`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ANSWER_DAY_TRIGGERS) await q.query(`DROP TRIGGER IF EXISTS ${t} ON execution_answers`);
    await q.query(`DROP FUNCTION IF EXISTS workflow_answer_days_maintain()`);
    await q.query(`DROP TABLE IF EXISTS workflow_answer_days`);
  }
}
