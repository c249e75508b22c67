// Executions per second under a closed loop of POST /v1/messages (each a new customer, matching a
// message trigger of a two-message workflow), with the WAL written per completed execution: the
// figure the history scenario compares between an empty database and one holding a year of
// history. A compact form of scenarios/executions.mjs (which also checks exactly-once and
// measures the 202 open loop).
import { cpuBetween, machineCpu } from './cpu.mjs';
import { round } from './load.mjs';

const CHANNEL = 'whatsapp';
const MESSAGE = 'order status please';

async function created(res, what) {
  if (res.status !== 200 && res.status !== 201) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
  return res.body.data;
}

async function waitUntil(what, timeoutMs, check) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const backlog = async (db, workflowId) =>
  (await db.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE workflow_id = $1 AND status = 'running'`, [workflowId])).rows[0].n;

/** `db` is a pg client on the scenario's database; the app (api + worker) is already up at `apiUrl`. */
export async function measureExecutionsPerSecond(ctx, apiUrl, db) {
  const workflow = await created(
    await ctx.api(apiUrl, 'POST', '/v1/workflows', {
      name: `bench executions ${Date.now()}`,
      channel: CHANNEL,
      configuration: {
        nodes: [
          { id: 'greet', type: 'message', content: 'Thanks for your message!', next: 'status' },
          { id: 'status', type: 'message', content: 'Your order is on its way.' },
        ],
      },
    }),
    'POST /v1/workflows',
  );
  await created(await ctx.api(apiUrl, 'POST', `/v1/workflows/${workflow.id}/activate`), 'activate');
  const trigger = await created(
    await ctx.api(apiUrl, 'POST', '/v1/triggers', {
      name: `bench order messages ${Date.now()}`,
      type: 'message',
      workflow_id: workflow.id,
      channel: CHANNEL,
      configuration: { keywords: ['order'] },
    }),
    'POST /v1/triggers',
  );
  // Sanity, and the worker known to be up: one message starts one execution, which succeeds.
  const first = await ctx.api(apiUrl, 'POST', '/v1/messages', { channel: CHANNEL, customer_id: `sanity-${Date.now()}`, message: MESSAGE });
  const executionId = first.body?.data?.executions?.[0]?.workflow_execution_id;
  if (first.status !== 202 || !executionId) throw new Error(`POST /v1/messages answered ${first.status}: ${JSON.stringify(first.body).slice(0, 500)}`);
  await waitUntil(`execution ${executionId} to succeed`, 90_000, async () => {
    const { rows } = await db.query(`SELECT status FROM workflow_executions WHERE id = $1`, [executionId]);
    if (rows[0]?.status === 'failed') throw new Error(`sanity execution ${executionId} failed`);
    return rows[0]?.status === 'success';
  });
  let seq = 0;
  const prefix = `bench-${Date.now().toString(36)}`;
  const requests = [
    {
      method: 'POST',
      path: '/v1/messages',
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ channel: CHANNEL, customer_id: `${prefix}-${seq++}`, message: MESSAGE }) }),
    },
  ];
  let walAtStart = null;
  let cpuAtStart = null;
  const http = await ctx.measure(
    { url: apiUrl, headers: { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' }, requests, connections: ctx.config.executionsConnections },
    {
      // The worker's backlog after the warm-up is part of the window, as in the executions scenario.
      drain: null,
      beforeMeasured: async () => {
        walAtStart = (await db.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn;
        cpuAtStart = machineCpu();
      },
    },
  );
  const cpu = cpuBetween(cpuAtStart, machineCpu());
  const { rows: [wal] } = await db.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes`, [walAtStart]);
  const windowS = (http.window.end - http.window.start) / 1000;
  const { rows: [w] } = await db.query(
    `SELECT count(*)::int AS completed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at) * 1000) AS p50_ms,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at) * 1000) AS p95_ms,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at) * 1000) AS p99_ms
       FROM workflow_executions WHERE workflow_id = $1 AND status <> 'running' AND completed_at >= $2 AND completed_at < $3`,
    [workflow.id, new Date(http.window.start), new Date(http.window.end)],
  );
  await waitUntil('the backlog to drain', 180_000, async () => (await backlog(db, workflow.id)) === 0);
  // A later measurement in the same database creates its own trigger for the same keyword: were this one left
  // active, each of its messages would start both workflows.
  const removed = await ctx.api(apiUrl, 'DELETE', `/v1/triggers/${trigger.id}`);
  if (removed.status !== 200 && removed.status !== 204) throw new Error(`DELETE /v1/triggers/${trigger.id} answered ${removed.status}`);
  const walPerExecution = w.completed > 0 ? Math.round(Number(wal.bytes) / w.completed) : null;
  return {
    requests_per_s: round(w.completed / windowS, 1),
    requests_total: w.completed,
    p50_ms: w.p50_ms === null ? null : Math.round(w.p50_ms),
    p95_ms: w.p95_ms === null ? null : Math.round(w.p95_ms),
    p99_ms: w.p99_ms === null ? null : Math.round(w.p99_ms),
    errors: w.failed,
    non_2xx: http.non_2xx,
    duration_s: round(windowS, 2),
    wal_bytes: Number(wal.bytes),
    wal_bytes_per_execution: walPerExecution,
    machine_cpu_ms_per_execution: cpu && w.completed > 0 ? round(cpu.busyMs / w.completed, 2) : null,
  };
}
