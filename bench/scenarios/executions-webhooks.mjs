// Executions with outbound webhooks on: the executions scenario's closed loop of
// POST /v1/messages (api + worker process, WORKER_CONCURRENCY=10), measured in turns with one
// webhook subscribed to `workflow.completed` active (the worker's relay turns every completion into a
// signed HTTPS delivery to a keep-alive receiver in its own process) and inactive (the relay still
// runs, marking the outbox rows published in bulk). Target: executions/s with the webhook within 15%
// of without it.
//
// The two variants run in the same processes and database, in BENCH_ROUNDS alternating slices of
// BENCH_DURATION_S / BENCH_ROUNDS seconds each (at least 2 s), so the machine's drift slows both
// alike; each slice starts with no execution running, no outbox row unpublished and no delivery
// pending, so one variant's leftovers are not counted in the other's slice. executions/s = executions
// completed in the slices / their length. At the end every delivery must be delivered (none failed
// or pending), one per workflow.completed event written while the webhook was active.
import pg from 'pg';
import { processesCpu, processesCpuBetween } from '../lib/cpu.mjs';
import { measure, round } from '../lib/load.mjs';
import { startReceiver } from '../lib/receiver-process.mjs';
import { backlog, CHANNEL, createBenchWorkflow, MESSAGE, waitUntil } from '../lib/executions-workflow.mjs';
import { windowFigures } from './executions.mjs';

const TARGET_RATIO = 0.85;
const WORKER_CONCURRENCY = 10;

async function settled(db) {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM workflow_executions WHERE status = 'running')::int
          + (SELECT count(*) FROM outbox_events WHERE published_at IS NULL)::int
          + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS n`,
  );
  return rows[0].n === 0;
}

export default {
  name: 'executions-webhooks',
  description: `executions/s with one webhook on workflow.completed (relay + deliveries in the worker) vs. without, interleaved`,

  async run(ctx) {
    const receiver = await startReceiver();
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    try {
      const api = await ctx.startApp({ role: 'api', env: receiver.env });
      const worker = await ctx.startApp({ role: 'worker', env: { ...receiver.env, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) } });
      const { workflow } = await createBenchWorkflow(ctx, api.url);
      const created = await ctx.api(api.url, 'POST', '/v1/webhooks', { name: 'bench completions', url: receiver.url, events: ['workflow.completed'] });
      if (created.status !== 201) throw new Error(`POST /v1/webhooks answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
      const webhookId = created.body.data.id;
      const setActive = async (active) => {
        const res = await ctx.api(api.url, 'PUT', `/v1/webhooks/${webhookId}`, { active });
        if (res.status !== 200) throw new Error(`PUT /v1/webhooks/{id} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      };
      await db.connect();

      let seq = 0;
      const prefix = `benchwh-${Date.now().toString(36)}`;
      const target = {
        url: api.url,
        headers: { authorization: `Bearer ${ctx.apiKey}`, 'content-type': 'application/json' },
        connections: ctx.config.executionsConnections,
        requests: [
          {
            method: 'POST',
            path: '/v1/messages',
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ channel: CHANNEL, customer_id: `${prefix}-${seq++}`, message: MESSAGE }) }),
          },
        ],
      };
      const waitSettled = () =>
        waitUntil('executions, outbox and deliveries to settle', 180_000, async () => {
          if (!worker.process.running) throw new Error(`the worker exited:\n${worker.process.log()}`);
          return settled(db);
        });

      // Warm-up of both paths (JIT, connections to the receiver), not counted.
      for (const active of [true, false]) {
        await waitSettled();
        await setActive(active);
        await measure(target, { durationS: Math.max(1, ctx.config.warmupS), warmupS: 0, connections: target.connections });
      }

      const rounds = ctx.config.rounds;
      const sliceS = Math.max(2, Math.round(ctx.config.durationS / rounds));
      const variant = () => ({ completed: 0, accepted: 0, seconds: 0, cpu: {}, p99: [], slices: [] });
      const variants = { without: variant(), with: variant() };
      const activeWindows = [];
      for (let r = 0; r < rounds; r++) {
        for (const name of r % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
          // Settled first: deactivating the webhook would end its still pending deliveries unsent.
          await waitSettled();
          await setActive(name === 'with');
          const pids = { api: api.process.child.pid, worker: worker.process.child.pid, receiver: receiver.pid };
          const cpuStart = await processesCpu(db, pids);
          const http = await measure(target, { durationS: sliceS, warmupS: 0, connections: target.connections });
          // The work a slice caused includes finishing its executions and deliveries.
          await waitSettled();
          const cpu = processesCpuBetween(cpuStart, await processesCpu(db, pids));
          const w = await windowFigures(db, http.window);
          const seconds = (http.window.end - http.window.start) / 1000;
          const v = variants[name];
          v.completed += w.completed;
          v.seconds += seconds;
          v.accepted += w.accepted;
          for (const [k, ms] of Object.entries(cpu)) v.cpu[k] = (v.cpu[k] ?? 0) + ms;
          v.p99.push(w.p99_ms);
          v.slices.push(round(w.completed / seconds, 1));
          if (name === 'with') activeWindows.push(http.window);
        }
      }
      await waitSettled();
      if ((await backlog(db)) !== 0) throw new Error('executions still running after settling');

      const { rows: [d] } = await db.query(
        `SELECT count(*)::int AS deliveries,
                count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                count(DISTINCT event_id)::int AS events,
                (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.status = 'delivered')::int AS delivered_attempts
           FROM webhook_deliveries WHERE webhook_id = $1`,
        [webhookId],
      );
      const problems = d.deliveries - d.delivered + (d.deliveries - d.events) + (d.delivered_attempts - d.delivered);

      const perS = (v) => round(v.completed / v.seconds, 1);
      const without = perS(variants.without);
      const withHooks = perS(variants.with);
      // CPU of the scenario's own processes (api, worker, receiver, PostgreSQL backends; not Redis,
      // which is shared) per execution accepted in the slices, including finishing them afterwards.
      const cpuPer = (v, k = 'total') => (v.accepted > 0 ? round((v.cpu[k] ?? 0) / v.accepted, 2) : null);
      const cpuText = (v) => ['total', 'api', 'worker', 'postgres', 'receiver'].map((k) => `${k} ${cpuPer(v, k)}`).join(', ');
      console.log(
        `  ${rounds} rounds of ${sliceS} s: without webhook ${without} executions/s (slices ${variants.without.slices.join(', ')}; CPU ms/execution: ${cpuText(variants.without)}), ` +
          `with webhook ${withHooks}/s (slices ${variants.with.slices.join(', ')}; CPU ms/execution: ${cpuText(variants.with)}), ratio ${round(withHooks / without, 3)}; ` +
          `${d.deliveries} deliveries, ${d.delivered} delivered, ${d.events} distinct events, ${problems} problems (failed, pending, duplicates)`,
      );
      const measurement = (v) => ({
        requests_per_s: perS(v),
        requests_total: v.completed,
        p50_ms: null,
        p99_ms: v.p99.some((p) => p === null) ? null : Math.round(Math.max(...v.p99)),
        errors: 0,
        non_2xx: 0,
        duration_s: round(v.seconds, 2),
        slices_per_s: v.slices,
        cpu_ms_per_execution: Object.fromEntries(Object.keys(v.cpu).map((k) => [k, cpuPer(v, k)])),
      });
      return [
        {
          name: 'executions/s, relay on, no webhook subscribed (reference)',
          measurement: measurement(variants.without),
          note: `workflow ${workflow.id.slice(0, 8)}, ${WORKER_CONCURRENCY} worker concurrency, ${target.connections} connections`,
        },
        {
          name: 'executions/s with one webhook on workflow.completed (each completion delivered)',
          measurement: { ...measurement(variants.with), errors: problems, deliveries: d.deliveries },
          baseline: { name: 'executions without webhooks', requests_per_s: without },
          target_ratio: TARGET_RATIO,
          note: `interleaved with the reference; ${d.delivered} deliveries, all delivered once`,
        },
      ];
    } finally {
      await db.end().catch(() => undefined);
      receiver.stop();
    }
  },
};
