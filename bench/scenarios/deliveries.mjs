// Outbound webhook deliveries end to end: events written to the outbox -> relay -> Bull -> signed
// HTTPS POST -> the receiver's 2xx. One worker process (WEBHOOK_CONCURRENCY=50) against a local
// keep-alive HTTPS receiver in its own process (bench/lib/https-receiver.mjs, self-signed
// certificate trusted through WEBHOOK_CA_FILE; deliveries restricted to loopback).
//
// Two rows:
//   - deliveries/s at saturation: BENCH_DELIVERIES events written at once; deliveries/s = events /
//     (last 2xx - write), with p50/p99 lag (event written -> 2xx answered).
//   - lag at 1,000 events/s offered (open loop: 100 events every 100 ms for BENCH_DURATION_S).
// Every event must be delivered exactly once (nothing fails here): checked from the log.
import Redis from 'ioredis';
import pg from 'pg';
import { cpuBetween, machineCpu, processCpuMs } from '../lib/cpu.mjs';
import { round } from '../lib/load.mjs';
import { startReceiver } from '../lib/receiver-process.mjs';

const TARGET_PER_S = 1500;
const TARGET_LAG_P99_MS = 1000;
const OFFERED_PER_S = 1000;
const CONCURRENCY = 50;

async function waitUntil(what, timeoutMs, check) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Lag (event written -> 2xx) of the delivered attempts of events written with this tag. */
async function figures(db, tag) {
  const { rows } = await db.query(
    `SELECT count(*)::int AS delivered, count(DISTINCT d.event_id)::int AS events,
            min(d.event_timestamp) AS first_written,
            max(a.delivered_at + a.response_time_ms * interval '1 millisecond') AS last_answered,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.delivered_at - d.event_timestamp) * 1000 + a.response_time_ms) AS p50_ms,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM a.delivered_at - d.event_timestamp) * 1000 + a.response_time_ms) AS p99_ms,
            max(extract(epoch FROM a.delivered_at - d.event_timestamp) * 1000 + a.response_time_ms) AS max_ms
       FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id AND a.status = 'delivered'
      WHERE d.data->>'tag' = $1`,
    [tag],
  );
  return rows[0];
}

/**
 * What one delivery costs: the worker's CPU, the transactions of the scenario's database (each
 * single statement outside BEGIN counts as one) and Redis commands (server-wide: other clients of
 * the same Redis count too, so an upper bound on a shared machine).
 */
async function costs(db, redis, pid, receiverPid) {
  const { rows: [x] } = await db.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
  // The PostgreSQL backends serving this scenario's database (the app's pools, this client).
  const { rows: backends } = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
  const info = await redis.info();
  const redisCpu = (/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? NaN) * 1000 + (/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? NaN) * 1000;
  return {
    cpuMs: processCpuMs(pid),
    receiverCpuMs: processCpuMs(receiverPid),
    backends: new Map(backends.map((b) => [b.pid, processCpuMs(b.pid)])),
    xacts: Number(x.n),
    redisCommands: Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN),
    redisCpuMs: redisCpu,
    machine: machineCpu(),
  };
}

function perDelivery(start, end, n) {
  let postgresMs = 0;
  for (const [pid, ms] of end.backends) postgresMs += (ms ?? 0) - (start.backends.get(pid) ?? 0);
  const per = (a, b) => (a === null || b === null ? null : round((b - a) / n, 3));
  return {
    worker_cpu_ms: per(start.cpuMs, end.cpuMs),
    postgres_backends_cpu_ms: round(postgresMs / n, 3),
    redis_server_cpu_ms: per(start.redisCpuMs, end.redisCpuMs),
    receiver_cpu_ms: per(start.receiverCpuMs, end.receiverCpuMs),
    machine_cpu_ms: start.machine && end.machine ? round(cpuBetween(start.machine, end.machine).busyMs / n, 3) : null,
    db_transactions: round((end.xacts - start.xacts) / n, 2),
    redis_commands: round((end.redisCommands - start.redisCommands) / n, 2),
  };
}

async function emit(db, organizationId, tag, count) {
  await db.query(
    `INSERT INTO outbox_events (organization_id, type, data)
     SELECT $1, 'workflow.completed', jsonb_build_object('tag', $2::text, 'n', n, 'workflow_id', gen_random_uuid(), 'status', 'success')
       FROM generate_series(1, $3) n`,
    [organizationId, tag, count],
  );
}

export default {
  name: 'deliveries',
  description: `outbox -> signed HTTPS delivery -> 2xx; worker process (WEBHOOK_CONCURRENCY ${CONCURRENCY}), keep-alive receiver process`,

  async run(ctx) {
    const receiver = await startReceiver();
    const env = { ...receiver.env, WEBHOOK_CONCURRENCY: String(CONCURRENCY) };
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    const redis = new Redis(ctx.config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      const api = await ctx.startApp({ role: 'api', env });
      const worker = await ctx.startApp({ role: 'worker', env });
      await db.connect();
      const created = await ctx.api(api.url, 'POST', '/v1/webhooks', { name: 'bench receiver', url: receiver.url, events: ['workflow.completed'] });
      if (created.status !== 201) throw new Error(`POST /v1/webhooks answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
      const { rows: [{ organization_id: organizationId }] } = await db.query(`SELECT organization_id FROM webhooks WHERE id = $1`, [created.body.data.id]);

      // Warm-up: connections open, code paths compiled.
      await emit(db, organizationId, 'warmup', 500);
      await waitUntil('warm-up deliveries', 60_000, async () => (await figures(db, 'warmup')).delivered >= 500);

      const total = Number(process.env.BENCH_DELIVERIES ?? 15_000);
      // pg_stat_database lags by up to a second: settle before each reading.
      await new Promise((r) => setTimeout(r, 1500));
      const before = await costs(db, redis, worker.process.child.pid, receiver.pid);
      await emit(db, organizationId, 'saturation', total);
      await waitUntil(`${total} deliveries`, 300_000, async () => (await figures(db, 'saturation')).delivered >= total);
      await new Promise((r) => setTimeout(r, 1500));
      // Minus this scenario's own polling statements (a handful per 100 ms), which count too.
      const cost = perDelivery(before, await costs(db, redis, worker.process.child.pid, receiver.pid), total);
      const sat = await figures(db, 'saturation');
      const satS = (new Date(sat.last_answered).getTime() - new Date(sat.first_written).getTime()) / 1000;
      const perS = round(total / satS, 1);

      const durationS = ctx.config.durationS;
      const start = Date.now();
      let sent = 0;
      for (let tick = 0; Date.now() - start < durationS * 1000; tick++) {
        const due = start + tick * 100;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        await emit(db, organizationId, 'open', OFFERED_PER_S / 10);
        sent += OFFERED_PER_S / 10;
      }
      await waitUntil(`${sent} open-loop deliveries`, 300_000, async () => (await figures(db, 'open')).delivered >= sent);
      const open = await figures(db, 'open');
      const duplicates = sat.delivered - sat.events + (open.delivered - open.events);
      console.log(`  saturation: ${total} events in ${round(satS, 2)} s = ${perS} deliveries/s, lag p50 ${Math.round(sat.p50_ms)} ms p99 ${Math.round(sat.p99_ms)} ms; ` +
        `open loop ${OFFERED_PER_S}/s for ${durationS} s: lag p50 ${Math.round(open.p50_ms)} ms p99 ${Math.round(open.p99_ms)} ms; duplicates ${duplicates}; ` +
        `per delivery: CPU ms worker ${cost.worker_cpu_ms}, PostgreSQL backends ${cost.postgres_backends_cpu_ms}, Redis ${cost.redis_server_cpu_ms}, ` +
        `receiver ${cost.receiver_cpu_ms}, machine ${cost.machine_cpu_ms}; ${cost.db_transactions} database transactions, ${cost.redis_commands} Redis commands ` +
        `(Redis and machine figures are server-/machine-wide: other users of them count too)`);
      return [
        {
          name: 'deliveries/s (outbox -> HTTPS 2xx; p50/p99 = event written -> 2xx)',
          measurement: { requests_per_s: perS, requests_total: total, p50_ms: Math.round(sat.p50_ms), p99_ms: Math.round(sat.p99_ms), max_ms: Math.round(sat.max_ms), errors: duplicates + (total - sat.events), non_2xx: 0, duration_s: round(satS, 2), per_delivery: cost },
          min_per_s: TARGET_PER_S,
          note: `${total} events written at once`,
        },
        {
          name: `delivery lag at ${OFFERED_PER_S} events/s offered`,
          measurement: { requests_per_s: round(open.delivered / durationS, 1), requests_total: open.delivered, p50_ms: Math.round(open.p50_ms), p99_ms: Math.round(open.p99_ms), max_ms: Math.round(open.max_ms), errors: sent - open.events, non_2xx: 0, duration_s: durationS },
          max_p99_ms: TARGET_LAG_P99_MS,
          note: 'open loop: 100 events every 100 ms',
        },
      ];
    } finally {
      await db.end().catch(() => undefined);
      redis.disconnect();
      receiver.stop();
    }
  },
};
