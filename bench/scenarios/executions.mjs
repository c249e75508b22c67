// Executions end to end: inbound POST /v1/messages (202) -> trigger fires -> one worker process runs
// the execution (two message nodes) to success. The app runs as two processes sharing the database
// and the Redis prefix, as in production: APP_ROLE=api for HTTP, APP_ROLE=worker with
// WORKER_CONCURRENCY=10 for the queue.
//
// Load: BENCH_EXECUTIONS_CONNECTIONS (10) concurrent clients, each sending its next request when
// the last 202 came back, each request a new customer (so it starts a conversation instead of
// resuming one): a closed loop, which drives the machine to saturation.
//
// Three rows:
//   - executions/s: executions that reached `success` within the measured window / its length,
//     with p50/p99 of their end-to-end time (started_at -> completed_at). The worker shares the two
//     cores with the API, PostgreSQL, Redis and the load generator, as the target assumes.
//   - the 202 of POST /v1/messages: latency p50/p99 under that closed-loop load (at saturation,
//     mean latency = connections / throughput).
//   - the 202 at the target rate, open loop (lib/open-loop.mjs): 300 requests/s on schedule, each
//     timed from when it was due.
// "Sustained" means the worker keeps up with what the API accepts: the note gives the accepted
// rate and the backlog (running executions) at the start and the end of the window. If the API
// accepts faster than the worker finishes, the backlog grows and completed/s is the real figure.
// After the window the backlog is drained and every accepted execution is checked: success, two
// outbound messages, two steps (exactly once), and the workflow's and trigger's counters match
// the rows exactly. Anything else counts as an error of the row.
import pg from 'pg';
import { cpuBetween, machineCpu, processesCpu, processesCpuBetween } from '../lib/cpu.mjs';
import { backlog, CHANNEL, createBenchWorkflow, MESSAGE, startApiAndWorker, waitUntil, WORKER_CONCURRENCY } from '../lib/executions-workflow.mjs';
import { round } from '../lib/load.mjs';
import { measureOpenLoop } from '../lib/open-loop.mjs';
import { createWhatsAppAccount } from '../lib/whatsapp.mjs';

const TARGET_EXECUTIONS_PER_S = 300;
const TARGET_P99_MS = 50;
const DRAIN_TIMEOUT_MS = 180_000;

/** The executions counted in [start, end) (epoch ms), and the backlog now. */
export async function windowFigures(db, { start, end }) {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'success' AND completed_at >= $1 AND completed_at < $2)::int AS completed,
            count(*) FILTER (WHERE status = 'failed' AND completed_at >= $1 AND completed_at < $2)::int AS failed,
            count(*) FILTER (WHERE started_at >= $1 AND started_at < $2)::int AS accepted,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at) * 1000)
              FILTER (WHERE status = 'success' AND completed_at >= $1 AND completed_at < $2) AS p50_ms,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at) * 1000)
              FILTER (WHERE status = 'success' AND completed_at >= $1 AND completed_at < $2) AS p99_ms,
            max(extract(epoch FROM completed_at - started_at) * 1000)
              FILTER (WHERE status = 'success' AND completed_at >= $1 AND completed_at < $2) AS max_ms
       FROM workflow_executions`,
    [new Date(start), new Date(end)],
  );
  return rows[0];
}

/**
 * Rollup freshness, in builds that fold their rollups from change logs (migration RollupFolding): the rows logged when
 * the backlog has drained, and how long until the workers have folded them all. `null` for builds without the logs.
 */
async function foldLag(db) {
  const { rows: [{ sql }] } = await db.query(
    `SELECT string_agg(format('(SELECT count(*) FROM %I)', tablename), ' + ') AS sql FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE '%\\_changes'`,
  );
  if (!sql) return null;
  const logged = async () => Number((await db.query(`SELECT ${sql} AS n`)).rows[0].n);
  const start = Date.now();
  const rows = await logged();
  await waitUntil('the rollups to be folded', 30_000, async () => (await logged()) === 0);
  return { rows, ms: Date.now() - start };
}

/**
 * Every execution of the run finished once: success, two steps, two outbound messages; and the
 * workflow's and the trigger's counters agree exactly with the rows (none lost, none doubled).
 */
async function exactlyOnceProblems(db, workflowId, triggerId) {
  const { rows } = await db.query(
    `WITH e AS (
       SELECT e.status,
              (SELECT count(*) FROM execution_steps s WHERE s.execution_id = e.id) AS steps,
              (SELECT count(*) FROM messages m WHERE m.execution_id = e.id AND m.direction = 'outbound') AS sent
         FROM workflow_executions e
     ), totals AS (
       SELECT count(*)::int AS executions,
              count(*) FILTER (WHERE status = 'success')::int AS succeeded,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status <> 'success')::int AS not_successful,
              count(*) FILTER (WHERE steps <> 2)::int AS wrong_steps,
              count(*) FILTER (WHERE sent <> 2)::int AS wrong_messages
         FROM e
     )
     SELECT t.executions, t.not_successful, t.wrong_steps, t.wrong_messages,
            (abs(w.execution_count - t.executions) + abs(w.success_count - t.succeeded) + abs(w.failure_count - t.failed))::int AS workflow_counts_off,
            (tr.execution_count - (SELECT count(*) FROM trigger_executions x WHERE x.trigger_id = tr.id))::int AS trigger_count_off
       FROM totals t, workflows w, triggers tr
      WHERE w.id = $1 AND tr.id = $2`,
    [workflowId, triggerId],
  );
  return rows[0];
}

export default {
  name: 'executions',
  description: `POST /v1/messages -> completed execution (2 message nodes); api process + worker process (concurrency ${WORKER_CONCURRENCY})`,

  async run(ctx) {
    const { api, worker } = await startApiAndWorker(ctx);

    const { workflow, trigger } = await createBenchWorkflow(ctx, api.url);
    // BENCH_EXECUTIONS_IDLE_ACCOUNT=1: one WhatsApp channel account exists and receives nothing (POST /v1/messages
    // names no account, so nothing is sent through it): what an idle account costs the executions figure.
    const idleAccount = ctx.config.executionsIdleAccount ? await createWhatsAppAccount(ctx, api.url, { name: 'bench idle account' }) : null;
    if (idleAccount) console.log(`  BENCH_EXECUTIONS_IDLE_ACCOUNT: one idle WhatsApp channel account (${idleAccount.id}) present during the load`);

    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    if (process.env.BENCH_EXPERIMENT_SQL) {
      // A what-if (bench/README.md): run on the migrated database before any load. The figures are not the build's.
      console.log(`  EXPERIMENT: ${process.env.BENCH_EXPERIMENT_SQL}`);
      await db.query(process.env.BENCH_EXPERIMENT_SQL);
    }
    try {
      // Sanity: one message starts one execution, which the worker (now known to be up) completes.
      const first = await ctx.api(api.url, 'POST', '/v1/messages', { channel: CHANNEL, customer_id: 'bench-sanity', message: MESSAGE });
      const executionId = first.body?.data?.executions?.[0]?.workflow_execution_id;
      if (first.status !== 202 || first.body.data.executions.length !== 1 || !executionId) {
        throw new Error(`POST /v1/messages answered ${first.status}: ${JSON.stringify(first.body).slice(0, 500)}`);
      }
      await waitUntil(`execution ${executionId} to succeed (is the worker up? ${worker.process.running ? 'running' : 'exited'})`, 60_000, async () => {
        if (!worker.process.running) throw new Error(`the worker exited:\n${worker.process.log()}`);
        const { rows } = await db.query(`SELECT status FROM workflow_executions WHERE id = $1`, [executionId]);
        if (rows[0]?.status === 'failed') throw new Error(`sanity execution failed: ${JSON.stringify(rows[0])}`);
        return rows[0]?.status === 'success';
      });

      // Each request a new customer: a known one with a waiting execution would resume it instead.
      let seq = 0;
      const prefix = `bench-${Date.now().toString(36)}`;
      const requests = [
        {
          method: 'POST',
          path: '/v1/messages',
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ channel: CHANNEL, customer_id: `${prefix}-${seq++}`, message: MESSAGE }) }),
        },
      ];
      let backlogAtStart = 0;
      let cpuAtStart = null;
      // Beside the machine's CPU, each process's own (as channels splits it): api, worker, this process (the load
      // generator), the PostgreSQL backends of the scenario's database. Not Redis.
      const pids = { api: api.process.child.pid, worker: worker.process.child.pid, bench: process.pid };
      let processesAtStart = null;
      const http = await ctx.measure(
        {
          url: api.url,
          headers: { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' },
          requests,
          connections: ctx.config.executionsConnections,
        },
        {
          // The backlog left by the warm-up is part of this window (backlog at start), not drained first.
          drain: null,
          beforeMeasured: async () => {
            backlogAtStart = await backlog(db);
            cpuAtStart = machineCpu();
            processesAtStart = await processesCpu(db, pids);
          },
        },
      );
      const cpu = cpuBetween(cpuAtStart, machineCpu());
      const byProcess = processesCpuBetween(processesAtStart, await processesCpu(db, pids));
      const backlogAtEnd = await backlog(db);
      const windowS = (http.window.end - http.window.start) / 1000;
      const w = await windowFigures(db, http.window);

      // Drain, then check that nothing was lost or done twice.
      const drainStart = Date.now();
      await waitUntil('the backlog to drain', DRAIN_TIMEOUT_MS, async () => (await backlog(db)) === 0);
      const drainS = round((Date.now() - drainStart) / 1000, 1);
      const fold = await foldLag(db);
      if (fold) console.log(`  rollups: ${fold.rows} change-log rows left when the backlog drained, all folded ${fold.ms} ms later`);

      // The 202 at the target rate, open loop: latency at that load rather than at saturation.
      const atTarget = await measureOpenLoop({
        url: api.url,
        headers: { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' },
        rate: TARGET_EXECUTIONS_PER_S,
        durationS: ctx.config.durationS,
        warmupS: ctx.config.warmupS,
        request: () => ({ method: 'POST', path: '/v1/messages', body: JSON.stringify({ channel: CHANNEL, customer_id: `${prefix}-${seq++}`, message: MESSAGE }) }),
      });
      const atTargetFigures = await windowFigures(db, atTarget.window);
      await waitUntil('the backlog to drain', DRAIN_TIMEOUT_MS, async () => (await backlog(db)) === 0);
      console.log(
        `  open loop at ${TARGET_EXECUTIONS_PER_S}/s offered: 202 p50 ${atTarget.p50_ms} ms, p99 ${atTarget.p99_ms} ms (the generator sent late by up to ${atTarget.send_lag_p99_ms} ms at p99); ` +
          `${round(atTargetFigures.completed / atTarget.duration_s, 1)} executions/s completed in that window`,
      );
      const check = await exactlyOnceProblems(db, workflow.id, trigger.id);
      const problems = check.not_successful + check.wrong_steps + check.wrong_messages + check.workflow_counts_off + Math.abs(check.trigger_count_off);
      const expected = seq + 1; // + the sanity execution
      const lost = Math.max(0, expected - check.executions);

      const completedPerS = round(w.completed / windowS, 1);
      const acceptedPerS = round(w.accepted / windowS, 1);
      const growthPerS = round((backlogAtEnd - backlogAtStart) / windowS, 1);
      // Keeps up: the backlog did not grow by more than a fraction of a second's work over the window.
      const keepsUp = backlogAtEnd - backlogAtStart <= Math.max(2 * WORKER_CONCURRENCY, 0.02 * w.accepted);
      const load = `${http.connections} connections`;
      // Everything on the machine (api, worker, PostgreSQL, Redis, the load generator) over the window.
      const cpuMsPerExecution = cpu && w.completed > 0 ? round(cpu.busyMs / w.completed, 2) : null;
      const processMs = Object.fromEntries(Object.entries(byProcess).map(([k, v]) => [k, w.completed > 0 ? round(v / w.completed, 2) : null]));
      const cpuNote = cpu
        ? `; machine CPU ${cpuMsPerExecution} ms per execution (${Math.round(cpu.utilisation * 100)}% busy; of it api ${processMs.api}, ` +
          `worker ${processMs.worker}, PostgreSQL ${processMs.postgres}, bench process (load) ${processMs.bench} ms)`
        : '';
      console.log(
        `  window ${round(windowS, 1)} s (${load}): accepted ${w.accepted} (${acceptedPerS}/s), completed ${w.completed} (${completedPerS}/s), ` +
          `failed ${w.failed}; backlog ${backlogAtStart} -> ${backlogAtEnd} (${growthPerS >= 0 ? '+' : ''}${growthPerS}/s), drained in ${drainS} s; ` +
          `${check.executions} executions checked: ${check.not_successful} not successful, ${check.wrong_steps} wrong step count, ` +
          `${check.wrong_messages} wrong message count, ${lost} missing; counters off by ${check.workflow_counts_off} (workflow), ${check.trigger_count_off} (trigger)${cpuNote}`,
      );

      // For scenarios later in the same invocation that compare with this figure (channels: conversations/s against it).
      ctx.shared.executions = { executions_per_s: completedPerS, machine_cpu_ms_per_execution: cpuMsPerExecution, idle_channel_account: idleAccount !== null };

      return [
        {
          name: `executions/s (POST /v1/messages -> success, 2 message nodes; p50/p99 = start->completed)`,
          measurement: {
            requests_per_s: completedPerS,
            requests_total: w.completed,
            p50_ms: w.p50_ms === null ? null : Math.round(w.p50_ms),
            p99_ms: w.p99_ms === null ? null : Math.round(w.p99_ms),
            max_ms: w.max_ms === null ? null : Math.round(w.max_ms),
            errors: w.failed + problems + lost,
            non_2xx: 0,
            duration_s: round(windowS, 2),
            accepted_per_s: acceptedPerS,
            backlog_start: backlogAtStart,
            backlog_end: backlogAtEnd,
            backlog_growth_per_s: growthPerS,
            keeps_up: keepsUp,
            drain_s: drainS,
            worker_concurrency: WORKER_CONCURRENCY,
            connections: http.connections,
            exactly_once: { ...check, missing: lost },
            machine_cpu_ms_per_execution: cpuMsPerExecution,
            machine_cpu_utilisation: cpu?.utilisation ?? null,
            process_cpu_ms_per_execution: processMs,
            idle_channel_account: idleAccount !== null,
          },
          min_per_s: TARGET_EXECUTIONS_PER_S,
          note:
            (keepsUp
              ? `worker keeps up with ${acceptedPerS}/s accepted`
              : `worker falls behind: ${acceptedPerS}/s accepted, backlog +${growthPerS}/s (drained in ${drainS} s)`) +
            (idleAccount ? '; one idle WhatsApp channel account present' : ''),
        },
        {
          name: 'POST /v1/messages (202)',
          measurement: http,
          max_p99_ms: TARGET_P99_MS,
          note: `${load}, closed loop (at saturation)`,
        },
        {
          name: `POST /v1/messages (202) at ${TARGET_EXECUTIONS_PER_S}/s offered`,
          measurement: atTarget,
          max_p99_ms: TARGET_P99_MS,
          note: 'open loop, timed from when each request was due',
        },
      ];
    } finally {
      await db.end();
    }
  },
};
