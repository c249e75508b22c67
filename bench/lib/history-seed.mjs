// Seeds a large history straight into the database with INSERT ... SELECT generate_series (no API
// round trips): in the organization of the bench's API key, WORKFLOWS workflows (names and
// descriptions from a small vocabulary, for search), and one "history" workflow with an api
// trigger holding EXECUTIONS executions over the last 365 days, customers from a pool, ~1% still
// running (the most recent ones, at the greeting), ~10% failed, the rest successful. The workflow is
// greet → status → survey, a form with an optional `rating` (1-5) and `nps` (0-10) field:
// - a successful execution has its 3 steps; 30% of them (deterministically, by execution number)
//   answered the form (ratings averaging 4.0, NPS answers 50% promoters and 20% detractors: +30),
//   the others skipped both fields (null answers); messages: the customer's request, "Hi", "On its
//   way", and for the answering ones the form's 2 prompts and 2 replies;
// - a failed one, as the engine records failures: 10% CONVERSATION_TIMEOUT at the form ("The
//   customer did not reply in time", after the 24-hour conversation timeout; steps greet and status,
//   messages up to the first prompt), the rest NODE_FAILED at "status" (an abandoned run: "The
//   execution could not be run: ..."; step greet, messages request and "Hi").
// Rows go in in time order, in batches, through the same triggers as the service's writes
// (rollups, counters), so the rollups, indexes and counters are what a year of traffic would leave;
// the workflow's and trigger's counters are then set from the rows, as the engine's statements would
// have kept them. `scale` multiplies every count (BENCH_HISTORY_SCALE).
import { round } from './load.mjs';

/**
 * The environment of a worker started on the seeded year. Its ~1% running executions are not waiting (they stand
 * at the greeting, as a run in progress would) and were never queued, so the sweep would take each for an
 * orphan and run it again, 500 a minute, beside whatever load is measured (in a database that has been running,
 * such rows are re-queued once and then wait); the load's own executions finish within seconds.
 */
export const SEEDED_YEAR_WORKER_ENV = { EXECUTION_ORPHAN_AFTER: '3650d' };

/** BENCH_HISTORY_SCALE (default 1): what the seeded counts are multiplied by, e.g. 0.02 for a quick trial. */
export function historyScaleFromEnv() {
  const raw = process.env.BENCH_HISTORY_SCALE ?? '1';
  const scale = Number(raw);
  if (!(scale > 0 && scale <= 10)) throw new Error(`BENCH_HISTORY_SCALE must be a number in (0, 10] (got ${JSON.stringify(raw)})`);
  return scale;
}

const FULL = { workflows: 100_000, executions: 1_000_000, customers: 50_000 };
const BATCH = 100_000;
const WORDS = ['order', 'refund', 'booking', 'support', 'lead', 'survey', 'delivery', 'invoice', 'appointment', 'feedback'];
const RATING_PROMPT = 'How did we do? (1-5, optional, reply "skip" to leave it out)';
const NPS_PROMPT = 'How likely are you to recommend us? (0-10, optional, reply "skip" to leave it out)';
const HISTORY_WORKFLOW = {
  nodes: [
    { id: 'greet', type: 'message', content: 'Hi', next: 'status' },
    { id: 'status', type: 'message', content: 'On its way', next: 'survey' },
    {
      id: 'survey',
      type: 'form',
      fields: [
        { name: 'rating', type: 'rating', required: false, label: 'How did we do? (1-5)' },
        { name: 'nps', type: 'nps', required: false, label: 'How likely are you to recommend us? (0-10)' },
      ],
    },
  ],
};
/** The engine's conversation timeout (CONVERSATION_TIMEOUT, default 24 hours): when an unanswered form fails. */
const CONVERSATION_TIMEOUT_MS = 86_400_000;

/** Runs `sql` and returns its duration in seconds. */
async function timed(db, sql, values) {
  const start = Date.now();
  await db.query(sql, values);
  return (Date.now() - start) / 1000;
}

export async function seedHistory(db, { scale = 1, log = () => {} } = {}) {
  const counts = {
    workflows: Math.max(10, Math.round(FULL.workflows * scale)),
    executions: Math.max(100, Math.round(FULL.executions * scale)),
    customers: Math.max(10, Math.round(FULL.customers * scale)),
  };
  const started = Date.now();
  const steps = {};
  const { rows: [{ organization_id: organizationId }] } = await db.query(`SELECT organization_id FROM api_keys ORDER BY created_at LIMIT 1`);

  // The per-organization count trigger updates the organization's row once per workflow; 100,000
  // updates of one row in one transaction walk an ever longer chain of its versions (quadratic).
  // Off for the bulk insert, then the count set from the rows, as the trigger would have left it.
  await db.query(`ALTER TABLE workflows DISABLE TRIGGER workflows_count_insert_delete`);
  steps.workflows = await timed(
    db,
    `INSERT INTO workflows (organization_id, name, description, channel, status, configuration, created_at, updated_at)
     SELECT $1, 'Workflow ' || lpad(i::text, 6, '0') || ' ' || ($3::text[])[1 + i % 10] || ' ' || ($3::text[])[1 + (i / 10) % 10],
            'Handles ' || ($3::text[])[1 + (i / 7) % 10] || ' requests for team ' || (i % 97),
            (ARRAY['whatsapp', 'instagram', 'voice'])[1 + i % 3], (ARRAY['draft', 'active', 'inactive'])[1 + i % 3],
            '{"nodes":[{"id":"a","type":"message","content":"hi"}]}',
            now() - interval '365 days' + i * (interval '365 days' / $2), now() - interval '365 days' + i * (interval '365 days' / $2)
       FROM generate_series(1, $2::int) i`,
    [organizationId, counts.workflows, WORDS],
  );
  await db.query(`ALTER TABLE workflows ENABLE TRIGGER workflows_count_insert_delete`);
  await db.query(`UPDATE organizations SET workflow_count = (SELECT count(*) FROM workflows WHERE organization_id = $1) WHERE id = $1`, [organizationId]);
  const { rows: [{ id: workflowId }] } = await db.query(
    `INSERT INTO workflows (organization_id, name, description, channel, status, configuration, activated_at)
     VALUES ($1, 'history', 'A year of executions', 'whatsapp', 'active',
             $2, now())
     RETURNING id`,
    [organizationId, JSON.stringify(HISTORY_WORKFLOW)],
  );
  await db.query(
    `INSERT INTO workflow_versions (organization_id, workflow_id, version, configuration, name, description, channel)
     SELECT organization_id, id, 1, configuration, name, description, channel FROM workflows WHERE id = $1`,
    [workflowId],
  );
  const { rows: [{ id: triggerId }] } = await db.query(
    `INSERT INTO triggers (organization_id, workflow_id, name, type, channel, configuration)
     VALUES ($1, $2, 'history api', 'api', 'whatsapp', '{"rate_limit":100,"authentication":"bearer"}') RETURNING id`,
    [organizationId, workflowId],
  );
  steps.customers = await timed(
    db,
    `INSERT INTO customers (organization_id, external_id, channel, first_seen_at, last_seen_at)
     SELECT $1, 'customer-' || i, 'whatsapp', now() - interval '365 days', now() FROM generate_series(1, $2::int) i`,
    [organizationId, counts.customers],
  );

  // Executions in time order, so that their time-ordered keys follow started_at as they would.
  steps.executions = 0;
  for (let from = 1; from <= counts.executions; from += BATCH) {
    const to = Math.min(counts.executions, from + BATCH - 1);
    steps.executions += await timed(
      db,
      `WITH g0 AS (
         SELECT i, uuid_v7() AS id, uuid_v7() AS te_id,
                now() - interval '365 days' + i * (interval '365 days' / $5) + (hashint4(i) % 1000) * interval '1 millisecond' AS started_at,
                CASE WHEN i > $5 * 0.99 THEN 'running' WHEN hashint4(i * 7) % 10 = 0 THEN 'failed' ELSE 'success' END AS status,
                200 + abs(hashint4(i * 13)::int8) % 600000 AS run_ms,
                1 + abs(hashint4(i * 31)::int8) % $6 AS customer_no,
                (ARRAY['whatsapp', 'instagram', 'voice'])[1 + abs(hashint4(i * 17)::int8) % 3] AS channel,
                abs(hashint4(i * 19)::int8) % 10 AS answer_draw, abs(hashint4(i * 41)::int8) % 10 AS failure_draw,
                (ARRAY[2, 3, 4, 4, 4, 5, 5, 5, 5, 3])[1 + abs(hashint4(i * 23)::int8) % 10] AS rating,
                (ARRAY[4, 6, 7, 8, 8, 9, 9, 10, 10, 10])[1 + abs(hashint4(i * 29)::int8) % 10] AS nps
           FROM generate_series($3::int, $4::int) i
       ), g AS MATERIALIZED (
         -- outcome: running, answered / skipped (success), timeout / node_failed (failed).
         SELECT g0.*, CASE WHEN status = 'running' THEN 'running' WHEN status = 'success' THEN CASE WHEN answer_draw < 3 THEN 'answered' ELSE 'skipped' END
                           WHEN failure_draw = 0 THEN 'timeout' ELSE 'node_failed' END AS outcome,
                CASE WHEN status = 'failed' AND failure_draw = 0 THEN $8::int + run_ms ELSE run_ms END AS duration_ms
           FROM g0 ORDER BY i
       ), c AS (
         SELECT g.*, cu.id AS customer_id FROM g JOIN customers cu ON cu.organization_id = $1 AND cu.external_id = 'customer-' || g.customer_no
       ), e AS (
         INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, trigger_id, trigger_execution_id, customer_id, customer_ref,
                                          channel, status, input, output, error, state, started_at, completed_at, duration_ms, created_at, updated_at)
         SELECT id, $1, $2, 1, $7, te_id, customer_id, 'customer-' || customer_no, channel, status, jsonb_build_object('message', 'order ' || i),
                CASE WHEN status <> 'running' THEN jsonb_build_object('response', 'On its way', 'next_action', CASE WHEN status = 'success' THEN 'end' ELSE 'abort' END) END,
                CASE outcome
                  WHEN 'timeout' THEN jsonb_build_object('code', 'CONVERSATION_TIMEOUT', 'message', 'The customer did not reply in time', 'node_id', 'survey')
                  WHEN 'node_failed' THEN jsonb_build_object('code', 'NODE_FAILED', 'message', 'The execution could not be run: connect ETIMEDOUT', 'node_id', 'status')
                END,
                CASE WHEN outcome = 'running' THEN '{"cursor":"status"}'::jsonb ELSE '{}' END,
                started_at, CASE WHEN status <> 'running' THEN started_at + duration_ms * interval '1 millisecond' END,
                CASE WHEN status <> 'running' THEN duration_ms END, started_at, started_at
           FROM c ORDER BY i
         RETURNING id
       ), te AS (
         INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at, completed_at, duration_ms, created_at)
         SELECT te_id, $1, $7, $2, id, status, jsonb_build_object('message', 'order ' || i, 'customer_id', 'customer-' || customer_no, 'channel', channel),
                started_at, CASE WHEN status <> 'running' THEN started_at + duration_ms * interval '1 millisecond' END,
                CASE WHEN status <> 'running' THEN duration_ms END, started_at
           FROM c ORDER BY i
       ), s AS (
         -- greet for all; status unless the run failed there (or is still running); the form step for the successful ones.
         INSERT INTO execution_steps (id, execution_id, node_id, type, status, started_at, completed_at, duration_ms, input, output, created_at)
         SELECT uuid_v7(), id, n.node, n.type, 'completed', started_at + n.k * interval '5 milliseconds',
                started_at + CASE WHEN n.k < 2 THEN n.k * interval '5 milliseconds' + interval '3 milliseconds' ELSE interval '2 minutes' END,
                CASE WHEN n.k < 2 THEN 3 ELSE 120000 - 10 END,
                CASE WHEN n.k < 2 THEN '{}' ELSE '{"fields":["rating","nps"]}' END::jsonb,
                CASE WHEN n.k < 2 THEN jsonb_build_object('message_sent', true)
                     WHEN outcome = 'answered' THEN jsonb_build_object('answers', jsonb_build_object('rating', rating, 'nps', nps))
                     ELSE '{"answers":{"rating":null,"nps":null}}' END,
                started_at + n.k * interval '5 milliseconds'
           FROM c CROSS JOIN (VALUES (0, 'greet', 'message'), (1, 'status', 'message'), (2, 'survey', 'form')) n(k, node, type)
          WHERE n.k = 0 OR (n.k = 1 AND outcome IN ('answered', 'skipped', 'timeout')) OR (n.k = 2 AND outcome IN ('answered', 'skipped'))
          ORDER BY i, n.k
       )
       INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, execution_id, node_id, created_at)
       SELECT uuid_v7(), $1, customer_id, channel, m.direction,
              CASE m.k WHEN 4 THEN rating::text WHEN 6 THEN nps::text ELSE m.content END, id, m.node, started_at + m.at
         FROM c CROSS JOIN (VALUES (0, 'inbound', 'order status please', NULL, interval '0 ms'), (1, 'outbound', 'Hi', 'greet', interval '5 ms'),
                                   (2, 'outbound', 'On its way', 'status', interval '10 ms'), (3, 'outbound', $9, 'survey', interval '15 ms'),
                                   (4, 'inbound', NULL, NULL, interval '1 minute'), (5, 'outbound', $10, 'survey', interval '1 minute 5 ms'),
                                   (6, 'inbound', NULL, NULL, interval '2 minutes')) m(k, direction, content, node, at)
        WHERE m.k <= 1 OR (m.k = 2 AND outcome <> 'node_failed') OR (m.k = 3 AND outcome IN ('answered', 'timeout')) OR (m.k > 3 AND outcome = 'answered')
        ORDER BY i, m.k`,
      [organizationId, workflowId, from, to, counts.executions, counts.customers, triggerId, CONVERSATION_TIMEOUT_MS, RATING_PROMPT, NPS_PROMPT],
    );
    // The rollups are folded from the change logs (src/rollups/README.md), as the workers do: all of the batch's rows.
    const foldStart = Date.now();
    while ((await db.query(`SELECT rollups_fold($1) AS n`, [4 * BATCH])).rows[0].n > 0);
    steps.fold = (steps.fold ?? 0) + (Date.now() - foldStart) / 1000;
    log(`  seeded executions ${to}/${counts.executions}`);
  }
  // The counters the engine's statements keep, from the rows.
  await db.query(
    `UPDATE workflows w SET execution_count = c.n, success_count = c.s, failure_count = c.f
       FROM (SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'success')::int AS s, count(*) FILTER (WHERE status = 'failed')::int AS f
               FROM workflow_executions WHERE workflow_id = $1) c
      WHERE w.id = $1`,
    [workflowId],
  );
  await db.query(`UPDATE triggers SET execution_count = (SELECT count(*) FROM trigger_executions WHERE trigger_id = $1), last_triggered = now() WHERE id = $1`, [triggerId]);
  steps.vacuum_analyze = await timed(db, `VACUUM ANALYZE`);
  const { rows: [sizes] } = await db.query(
    `SELECT (SELECT count(*) FROM workflow_executions)::int AS executions, (SELECT count(*) FROM execution_steps)::int AS steps,
            (SELECT count(*) FROM messages)::int AS messages, (SELECT count(*) FROM workflows WHERE organization_id = $1)::int AS workflows,
            pg_size_pretty(pg_database_size(current_database())) AS database_size`,
    [organizationId],
  );
  return {
    organizationId,
    workflowId,
    triggerId,
    counts: sizes,
    seconds: round((Date.now() - started) / 1000, 1),
    steps_s: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, round(v, 1)])),
  };
}
