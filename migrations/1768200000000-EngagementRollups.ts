import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The customer engagement endpoint's rollups (docs/DECISIONS.md "Analytics", "Engagement";
 * docs/ARCHITECTURE.md, "Database triggers"), kept by statement-level triggers of their own, so that a 30-day request reads a
 * few rows per conversation and per answered form instead of every message and step:
 *
 * - `customer_sessions`: a customer's sessions per channel — messages on one channel with gaps
 *   under 30 minutes — with their first and last message times and message count. Kept on every
 *   insert, delete and update (of the customer, channel or time) of messages: the sessions of each
 *   changed (customer, channel) overlapping [first changed time - 30 min, last + 30 min] are
 *   deleted and recomputed from the messages they and the changed rows span, so a message that
 *   arrives out of order, a batch, or a deletion leave exactly the sessions the rows define.
 *   The common write — new messages after the end of their pair's last session — extends that
 *   session or starts new ones from the new rows alone, without the recompute.
 *   Concurrent statements on the same (customer, channel) are serialized by a transaction-level
 *   advisory lock per pair (a statement touching more than 64 pairs, a bulk load, takes the
 *   table in EXCLUSIVE mode instead: a lock per pair would fill the lock table); the recompute
 *   then runs with a snapshot taken after the lock, so it sees every committed message.
 * - `customer_channels`: per customer and channel, when its first session there started (what
 *   "customers seen on a channel by a date" reads), kept by the same trigger.
 * - `execution_answers`: per execution with rating/NPS answers, the sum and count of its `rating`
 *   answers and its NPS promoters (9-10), detractors (0-6) and answers, with the execution's
 *   organization, workflow, customer (null without one), channel and start (the time answers are
 *   counted at). A field's type comes from the workflow version the execution ran. Refreshed per
 *   execution when a form step is written or deleted, or when an execution's customer, channel,
 *   start, workflow or version changes (a deleted customer sets the execution's to null); an
 *   execution's deletion cascades.
 *
 * Joins of transition tables to base tables are LATERAL or `= ANY (ARRAY(..))`: planned with a
 * transition table of unknown size, a hash join could scan the whole base table per statement.
 */

const GAP = `interval '30 minutes'`;

/** Sessions of the (customer, channel) pairs of `changed` (customer_id, channel, created_at), recomputed. */
function recomputeSessions(changed: string): string {
  return `
    WITH k AS (
      SELECT customer_id, channel, min(created_at) AS lo, max(created_at) AS hi FROM (${changed}) c GROUP BY customer_id, channel
    ), gone AS (
      DELETE FROM customer_sessions s
       WHERE s.ctid = ANY (ARRAY(
         SELECT x.ctid FROM k CROSS JOIN LATERAL (
           SELECT ss.ctid FROM customer_sessions ss
            WHERE ss.customer_id = k.customer_id AND ss.channel = k.channel AND ss.ended_at > k.lo - ${GAP} AND ss.started_at < k.hi + ${GAP}) x))
      RETURNING s.customer_id, s.channel, s.started_at, s.ended_at
    ), r AS (
      SELECT k.customer_id, k.channel, LEAST(k.lo, min(g.started_at)) AS lo, GREATEST(k.hi, max(g.ended_at)) AS hi
        FROM k LEFT JOIN gone g ON g.customer_id = k.customer_id AND g.channel = k.channel
       GROUP BY k.customer_id, k.channel, k.lo, k.hi
    ), m AS (
      SELECT msg.organization_id, r.customer_id, r.channel, msg.created_at,
             CASE WHEN msg.created_at - lag(msg.created_at) OVER (PARTITION BY r.customer_id, r.channel ORDER BY msg.created_at) < ${GAP}
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
     ORDER BY customer_id, channel, max(created_at);`;
}

/** Serializes statements on the same pairs of `changed`; see above. */
function lockPairs(changed: string): string {
  return `
    pairs := ARRAY(SELECT DISTINCT hashtextextended(customer_id::text || '/' || channel, 1768200000) FROM (${changed}) c ORDER BY 1);
    IF cardinality(pairs) > 64 THEN
      LOCK TABLE customer_sessions IN EXCLUSIVE MODE;
    ELSE
      LOCK TABLE customer_sessions IN ROW EXCLUSIVE MODE;
      PERFORM pg_advisory_xact_lock(k) FROM unnest(pairs) k;
    END IF;`;
}

/**
 * The common write: every pair's new messages come at or after the end of the pair's last session
 * (a conversation going on; the engine's commit of a run's replies, a batch of runs): then the
 * sessions follow from the new rows and each pair's last session alone — the last session joins
 * the first new message within 30 minutes of its end — in one statement, without re-reading any
 * message. `appendable` is false when some new message is older than its pair's last session's
 * end (out of order): the general recompute then runs. Runs after the pairs' locks.
 */
const APPEND = `
    SELECT COALESCE(bool_and(x.ended_at IS NULL OR x.ended_at <= k.lo), true) INTO appendable
      FROM (SELECT customer_id, channel, min(created_at) AS lo FROM new_rows GROUP BY customer_id, channel) k
      LEFT JOIN LATERAL (SELECT s.ended_at FROM customer_sessions s WHERE s.customer_id = k.customer_id AND s.channel = k.channel
                          ORDER BY s.ended_at DESC LIMIT 1) x ON true;
    IF appendable THEN
      WITH k AS (
        SELECT customer_id, channel, min(organization_id::text)::uuid AS organization_id, min(created_at) AS lo
          FROM new_rows GROUP BY customer_id, channel
      ), joined AS (
        -- Each pair's last session when the first new message is less than 30 minutes after its end.
        SELECT k.customer_id, k.channel, k.organization_id, x.started_at, x.ended_at, x.messages
          FROM k CROSS JOIN LATERAL (SELECT s.started_at, s.ended_at, s.messages FROM customer_sessions s
                                      WHERE s.customer_id = k.customer_id AND s.channel = k.channel ORDER BY s.ended_at DESC LIMIT 1) x
         WHERE x.ended_at > k.lo - ${GAP}
      ), gone AS (
        -- Read below (not left to run after the insert): the insert may write the same key again.
        DELETE FROM customer_sessions s
         WHERE s.ctid = ANY (ARRAY(SELECT x.ctid FROM joined j CROSS JOIN LATERAL (
                 SELECT ss.ctid FROM customer_sessions ss WHERE ss.customer_id = j.customer_id AND ss.channel = j.channel AND ss.ended_at = j.ended_at) x))
        RETURNING s.customer_id, s.channel, s.organization_id, s.started_at, s.ended_at, s.messages
      ), r AS (
        -- The joined session stands as one row at its end (what the next gap is measured from).
        SELECT n.customer_id, n.channel, k.organization_id, n.created_at AS at, n.created_at AS first_at, 1 AS messages
          FROM new_rows n JOIN k ON k.customer_id = n.customer_id AND k.channel = n.channel
        UNION ALL
        SELECT customer_id, channel, organization_id, ended_at, started_at, messages FROM gone
      ), marked AS (
        SELECT r.*, CASE WHEN at - lag(at) OVER (PARTITION BY customer_id, channel ORDER BY at) < ${GAP} THEN 0 ELSE 1 END AS starts FROM r
      ), numbered AS (
        SELECT marked.*, sum(starts) OVER (PARTITION BY customer_id, channel ORDER BY at ROWS UNBOUNDED PRECEDING) AS session FROM marked
      ), firsts AS (
        -- A pair's first message when it had no session (otherwise its first is older than these).
        INSERT INTO customer_channels AS cc (customer_id, channel, organization_id, first_at)
        SELECT k.customer_id, k.channel, k.organization_id, k.lo FROM k
         WHERE NOT EXISTS (SELECT 1 FROM customer_sessions s WHERE s.customer_id = k.customer_id AND s.channel = k.channel)
         ORDER BY 1, 2
        ON CONFLICT (customer_id, channel) DO UPDATE SET first_at = LEAST(cc.first_at, EXCLUDED.first_at)
      )
      INSERT INTO customer_sessions (customer_id, channel, organization_id, started_at, ended_at, messages)
      SELECT customer_id, channel, organization_id, min(first_at), max(at), sum(messages)::int
        FROM numbered GROUP BY customer_id, channel, organization_id, session
       ORDER BY customer_id, channel, max(at);
      RETURN NULL;
    END IF;`;

const INSERTED = `SELECT customer_id, channel, created_at FROM new_rows`;
const DELETED = `SELECT customer_id, channel, created_at FROM old_rows`;
const MOVED = `
  SELECT o.customer_id, o.channel, o.created_at FROM old_rows o JOIN new_rows n ON n.id = o.id
   WHERE (o.customer_id, o.channel, o.created_at) IS DISTINCT FROM (n.customer_id, n.channel, n.created_at)
  UNION ALL
  SELECT n.customer_id, n.channel, n.created_at FROM old_rows o JOIN new_rows n ON n.id = o.id
   WHERE (o.customer_id, o.channel, o.created_at) IS DISTINCT FROM (n.customer_id, n.channel, n.created_at)`;

/**
 * Separate statements: the lock is taken before the recompute's snapshot (each statement of a
 * PL/pgSQL function takes its own in READ COMMITTED).
 */
function sessionsBranch(changed: string): string {
  return `
    IF NOT EXISTS (${changed}) THEN RETURN NULL; END IF;
    ${lockPairs(changed)}
    ${recomputeSessions(changed)}
    ${recomputeChannels(changed)}`;
}

/** The first session start of the pairs of `changed`, from their sessions (none: the pair's row goes). */
function recomputeChannels(changed: string): string {
  return `
    WITH p AS (
      SELECT DISTINCT customer_id, channel FROM (${changed}) c
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
    ON CONFLICT (customer_id, channel) DO UPDATE SET first_at = EXCLUDED.first_at WHERE cc.first_at IS DISTINCT FROM EXCLUDED.first_at;`;
}

export const SESSIONS_FUNCTION = `
  CREATE FUNCTION customer_sessions_maintain() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    pairs bigint[];
    appendable boolean;
  BEGIN
    IF TG_OP = 'INSERT' THEN
      IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
      ${lockPairs(INSERTED)}
      ${APPEND}
      ${sessionsBranch(INSERTED)}
    ELSIF TG_OP = 'UPDATE' THEN
      ${sessionsBranch(MOVED)}
    ELSE
      ${sessionsBranch(DELETED)}
    END IF;
    RETURN NULL;
  END
  $fn$`;

/** Every session of the messages, for the backfill. */
const ALL_SESSIONS = `
  INSERT INTO customer_sessions (customer_id, channel, organization_id, started_at, ended_at, messages)
  SELECT customer_id, channel, organization_id, min(created_at), max(created_at), count(*)::int
    FROM (SELECT *, sum(starts) OVER (PARTITION BY customer_id, channel ORDER BY created_at ROWS UNBOUNDED PRECEDING) AS session
            FROM (SELECT m.organization_id, m.customer_id, m.channel, m.created_at,
                         CASE WHEN m.created_at - lag(m.created_at) OVER (PARTITION BY m.customer_id, m.channel ORDER BY m.created_at) < ${GAP}
                              THEN 0 ELSE 1 END AS starts
                    FROM messages m) a) b
   GROUP BY customer_id, channel, organization_id, session`;

/** The answer facts of the executions `e` (a FROM item with the executions' columns). */
function answerFacts(executions: string): string {
  return `
    SELECT e.id, e.organization_id, e.workflow_id, e.customer_id, e.channel, e.started_at,
           COALESCE(sum(a.value) FILTER (WHERE a.type = 'rating'), 0)::float8,
           (count(*) FILTER (WHERE a.type = 'rating'))::int,
           (count(*) FILTER (WHERE a.type = 'nps' AND a.value >= 9))::int,
           (count(*) FILTER (WHERE a.type = 'nps' AND a.value <= 6))::int,
           (count(*) FILTER (WHERE a.type = 'nps'))::int
      FROM ${executions}
      JOIN execution_steps s ON s.execution_id = e.id AND s.type = 'form'
      JOIN workflow_versions v ON v.workflow_id = e.workflow_id AND v.version = e.workflow_version
     CROSS JOIN LATERAL jsonb_array_elements(v.configuration->'nodes') nd
     CROSS JOIN LATERAL jsonb_array_elements(COALESCE(nd->'fields', '[]'::jsonb)) f
     CROSS JOIN LATERAL (SELECT f->>'type' AS type, (s.output->'answers'->>(f->>'name'))::float8 AS value) a
     WHERE nd->>'id' = s.node_id AND f->>'type' IN ('rating', 'nps')
       AND jsonb_typeof(s.output->'answers'->(f->>'name')) = 'number'
     GROUP BY e.id, e.organization_id, e.workflow_id, e.customer_id, e.channel, e.started_at`;
}

const ANSWER_COLUMNS = 'execution_id, organization_id, workflow_id, customer_id, channel, started_at, rating_sum, ratings, promoters, detractors, nps_answers';

const REFRESH_FUNCTION = `
  CREATE FUNCTION execution_answers_refresh(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $fn$
  BEGIN
    DELETE FROM execution_answers WHERE execution_id = ANY (ids);
    INSERT INTO execution_answers AS x (${ANSWER_COLUMNS})
    ${answerFacts(`(SELECT * FROM workflow_executions WHERE id = ANY (ids)) e`)}
    ORDER BY 1
    ON CONFLICT (execution_id) DO UPDATE SET organization_id = EXCLUDED.organization_id, workflow_id = EXCLUDED.workflow_id, customer_id = EXCLUDED.customer_id,
      channel = EXCLUDED.channel, started_at = EXCLUDED.started_at, rating_sum = EXCLUDED.rating_sum, ratings = EXCLUDED.ratings,
      promoters = EXCLUDED.promoters, detractors = EXCLUDED.detractors, nps_answers = EXCLUDED.nps_answers;
  END
  $fn$`;

/** Form steps written or deleted: their executions' answers again. Other steps stop at one check. */
const STEPS_FUNCTION = `
  CREATE FUNCTION execution_answers_steps() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    ids uuid[];
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ids := ARRAY(SELECT DISTINCT execution_id FROM new_rows WHERE type = 'form');
    ELSIF TG_OP = 'UPDATE' THEN
      ids := ARRAY(SELECT execution_id FROM new_rows WHERE type = 'form' UNION SELECT execution_id FROM old_rows WHERE type = 'form');
    ELSE
      ids := ARRAY(SELECT DISTINCT execution_id FROM old_rows WHERE type = 'form');
    END IF;
    IF cardinality(ids) > 0 THEN
      PERFORM execution_answers_refresh(ids);
    END IF;
    RETURN NULL;
  END
  $fn$`;

/** An execution's customer, channel, start, workflow or version changed (rare: a customer deleted sets it null). */
const EXECUTIONS_FUNCTION = `
  CREATE FUNCTION execution_answers_executions() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    ids uuid[];
  BEGIN
    ids := ARRAY(
      SELECT n.id FROM old_rows o JOIN new_rows n ON n.id = o.id
       WHERE (o.organization_id, o.customer_id, o.channel, o.started_at, o.workflow_id, o.workflow_version)
             IS DISTINCT FROM (n.organization_id, n.customer_id, n.channel, n.started_at, n.workflow_id, n.workflow_version));
    IF cardinality(ids) > 0 THEN
      PERFORM execution_answers_refresh(ids);
    END IF;
    RETURN NULL;
  END
  $fn$`;

function statementTriggers(table: string, fn: string, prefix: string, ops: ('INSERT' | 'UPDATE' | 'DELETE')[]): string[] {
  return ops.map((op) => {
    const refs = op === 'INSERT' ? 'NEW TABLE AS new_rows' : op === 'DELETE' ? 'OLD TABLE AS old_rows' : 'OLD TABLE AS old_rows NEW TABLE AS new_rows';
    return `CREATE TRIGGER ${prefix}_${op.toLowerCase()} AFTER ${op} ON ${table} REFERENCING ${refs} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`;
  });
}

export class EngagementRollups1768200000000 implements MigrationInterface {
  name = 'EngagementRollups1768200000000';

  async up(q: QueryRunner): Promise<void> {
    // No write between the backfills and the triggers that keep what they filled.
    await q.query(`LOCK TABLE messages, execution_steps, workflow_executions IN SHARE MODE`);
    await q.query(`
      CREATE TABLE customer_sessions (
        customer_id uuid NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        channel varchar(32) NOT NULL,
        organization_id uuid NOT NULL,
        started_at timestamptz NOT NULL,
        ended_at timestamptz NOT NULL,
        messages int NOT NULL,
        -- A pair's sessions never overlap: the last message time names one.
        PRIMARY KEY (customer_id, channel, ended_at)
      )`);
    await q.query(ALL_SESSIONS);
    await q.query(`
      CREATE INDEX idx_customer_sessions_org_started ON customer_sessions (organization_id, started_at)
        INCLUDE (customer_id, channel, ended_at, messages)`);
    await q.query(`
      CREATE TABLE customer_channels (
        customer_id uuid NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        channel varchar(32) NOT NULL,
        organization_id uuid NOT NULL,
        -- When the customer's first session on the channel started.
        first_at timestamptz NOT NULL,
        PRIMARY KEY (customer_id, channel)
      )`);
    await q.query(`
      INSERT INTO customer_channels (customer_id, channel, organization_id, first_at)
      SELECT customer_id, channel, organization_id, min(started_at) FROM customer_sessions GROUP BY customer_id, channel, organization_id`);
    await q.query(`CREATE INDEX idx_customer_channels_org_channel_first ON customer_channels (organization_id, channel, first_at) INCLUDE (customer_id)`);
    await q.query(`
      CREATE TABLE execution_answers (
        execution_id uuid PRIMARY KEY REFERENCES workflow_executions(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        workflow_id uuid NOT NULL,
        -- No foreign key: a deleted customer sets the execution's customer_id to null, which refreshes the row.
        customer_id uuid,
        channel varchar(32),
        started_at timestamptz NOT NULL,
        rating_sum float8 NOT NULL,
        ratings int NOT NULL,
        promoters int NOT NULL,
        detractors int NOT NULL,
        nps_answers int NOT NULL
      )`);
    await q.query(`INSERT INTO execution_answers (${ANSWER_COLUMNS}) ${answerFacts('workflow_executions e')}`);
    await q.query(`
      CREATE INDEX idx_execution_answers_org_started ON execution_answers (organization_id, started_at)
        INCLUDE (customer_id, channel, rating_sum, ratings, promoters, detractors, nps_answers)`);
    await q.query(`CREATE INDEX idx_execution_answers_workflow_started ON execution_answers (workflow_id, started_at) INCLUDE (rating_sum, ratings)`);
    // New customers of a period (first seen in it), and customers known by its end, by index.
    await q.query(`CREATE INDEX idx_customers_org_first_seen ON customers (organization_id, first_seen_at)`);
    await q.query(SESSIONS_FUNCTION);
    await q.query(REFRESH_FUNCTION);
    await q.query(STEPS_FUNCTION);
    await q.query(EXECUTIONS_FUNCTION);
    for (const sql of [
      ...statementTriggers('messages', 'customer_sessions_maintain', 'messages_sessions', ['INSERT', 'UPDATE', 'DELETE']),
      ...statementTriggers('execution_steps', 'execution_answers_steps', 'execution_steps_answers', ['INSERT', 'UPDATE', 'DELETE']),
      ...statementTriggers('workflow_executions', 'execution_answers_executions', 'workflow_executions_answers', ['UPDATE']),
    ]) {
      await q.query(sql);
    }
    await q.query(`ANALYZE customer_sessions`);
    await q.query(`ANALYZE customer_channels`);
    await q.query(`ANALYZE execution_answers`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['messages_sessions_insert', 'messages_sessions_update', 'messages_sessions_delete']) await q.query(`DROP TRIGGER IF EXISTS ${t} ON messages`);
    for (const t of ['execution_steps_answers_insert', 'execution_steps_answers_update', 'execution_steps_answers_delete']) {
      await q.query(`DROP TRIGGER IF EXISTS ${t} ON execution_steps`);
    }
    await q.query(`DROP TRIGGER IF EXISTS workflow_executions_answers_update ON workflow_executions`);
    for (const f of ['customer_sessions_maintain()', 'execution_answers_steps()', 'execution_answers_executions()', 'execution_answers_refresh(uuid[])']) {
      await q.query(`DROP FUNCTION IF EXISTS ${f}`);
    }
    await q.query(`DROP INDEX IF EXISTS idx_customers_org_first_seen`);
    await q.query(`DROP TABLE IF EXISTS execution_answers`);
    await q.query(`DROP TABLE IF EXISTS customer_channels`);
    await q.query(`DROP TABLE IF EXISTS customer_sessions`);
  }
}
