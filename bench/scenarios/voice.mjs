// Phone calls through Twilio end to end: signed, form-encoded call requests to POST /v1/channel-accounts/{id}/voice,
// as Twilio sends them (X-Twilio-Signature from the twilio package's getExpectedTwilioSignature). Each call is two
// turns: the call coming in (answered with the greeting and a question in a Gather, once the worker's run waits) and
// the caller's spoken answer to the Gather's action URL (answered with the goodbye and Hangup, once the run ends).
// Every answer waits for a run in the worker process and is woken by its announcement (Redis pub/sub).
//
// The app: api process + worker process (WORKER_CONCURRENCY as executions), PUBLIC_BASE_URL a fixed public-looking
// address (what the requests are signed for), VOICE_ANSWER_TIMEOUT 8 s (a hold would count as an error here).
//
//   closed loop: BENCH_EXECUTIONS_CONNECTIONS callers, each placing its next call once its last one hung up.
//   Turns answered per second in the window (a turn = one call request answered with the expected TwiML) and the
//   TwiML answer latency (request sent -> answer read) p50/p99; calls completed per second beside them.
//   open loop at half that rate: calls started at a fixed pace (half the closed loop's turns/s, so two turns a call
//   offer that many turns/s), each turn timed from when it was due (a call's first turn from its scheduled start,
//   its second from when the first was answered), whatever the service does: TwiML answer latency p99, target
//   < 500 ms.
//   turns/s against the executions scenario's executions/s when both ran in this invocation (target >= 0.5).
//   Correctness over the run: every answer as expected (no hold, no error), every execution successful, one per call.
import http from 'node:http';
import twilio from 'twilio';
import pg from 'pg';
import { performance } from 'node:perf_hooks';
import { cpuBetween, machineCpu } from '../lib/cpu.mjs';
import { expectCreated, startApiAndWorker, waitUntil, WORKER_CONCURRENCY } from '../lib/executions-workflow.mjs';
import { quantile, round } from '../lib/load.mjs';

const PUBLIC_BASE_URL = 'https://voice.bench.example.com';
const AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const CREDENTIALS = { account_sid: `AC${'b2'.repeat(16)}`, auth_token: AUTH_TOKEN, phone_number: '+14155550100' };
const GREETING = 'Welcome to the bench line.';
const QUESTION = 'What is your name?';
const GOODBYE = 'Thank you, goodbye.';

const TARGET_RATIO_TO_EXECUTIONS = 0.5;
const TARGET_P99_MS = 500;

const ms = (v) => (v === null || v === undefined ? null : round(v, 1));

// One keep-alive agent: the load generator's own cost per request stays small (fetch cost about 1.8 ms of the
// machine's CPU per turn, all of it counted in the figures).
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One signed call request; resolves to the TwiML text (throws on a non-200 or after 15 s). */
function turn(apiUrl, path, params) {
  const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC_BASE_URL}${path}`, params);
  const body = new URLSearchParams(params).toString();
  const url = new URL(path, apiUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        timeout: 15_000,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), 'x-twilio-signature': signature },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`POST ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`));
          else resolve(text);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${path}: no answer within 15 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export default {
  name: 'voice',
  description: `signed Twilio call requests -> TwiML once the worker's run waits or ends (two turns per call); api process + worker process (concurrency ${WORKER_CONCURRENCY})`,

  async run(ctx) {
    const env = { PUBLIC_BASE_URL, VOICE_ANSWER_TIMEOUT: '8s' };
    const { api } = await startApiAndWorker(ctx, env);
    const workflow = await expectCreated(
      await ctx.api(api.url, 'POST', '/v1/workflows', {
        name: 'bench voice',
        channel: 'voice',
        configuration: {
          nodes: [
            { id: 'greet', type: 'message', content: GREETING, next: 'ask' },
            { id: 'ask', type: 'form', fields: [{ name: 'full_name', type: 'text', required: true, label: QUESTION }], next: 'bye' },
            { id: 'bye', type: 'message', content: GOODBYE },
          ],
        },
      }),
      'POST /v1/workflows',
    );
    await expectCreated(await ctx.api(api.url, 'POST', `/v1/workflows/${workflow.id}/activate`), 'activate');
    const account = await expectCreated(
      await ctx.api(api.url, 'POST', '/v1/channel-accounts', { name: 'bench voice', channel: 'voice', provider: 'twilio', credentials: CREDENTIALS, settings: { workflow_id: workflow.id } }),
      'POST /v1/channel-accounts',
    );
    const voicePath = `/v1/channel-accounts/${account.id}/voice`;
    let calls = 0;
    const turns = [];
    const problems = [];

    /** One whole call; each answered turn recorded with its latency and when it ended. */
    async function call(phase, dueAt = performance.now()) {
      const n = calls++;
      const sid = `CA${n.toString(16).padStart(32, '0')}`;
      const from = `+1555${String(1_000_000 + n).slice(-7)}`;
      const base = { AccountSid: CREDENTIALS.account_sid, CallSid: sid, From: from, To: CREDENTIALS.phone_number, Direction: 'inbound' };
      let t0 = dueAt;
      const first = await turn(api.url, voicePath, { ...base, CallStatus: 'ringing' });
      turns.push({ phase, ms: performance.now() - t0, at: Date.now() });
      const action = /<Gather [^>]*action="([^"]+)"/.exec(first)?.[1];
      if (!first.includes(GREETING) || !first.includes(QUESTION) || !action) {
        problems.push(`call ${n}, turn 0: ${first.slice(0, 200)}`);
        return;
      }
      t0 = performance.now();
      const second = await turn(api.url, action.slice(PUBLIC_BASE_URL.length), { ...base, CallStatus: 'in-progress', SpeechResult: `Caller ${n}`, Confidence: '0.9' });
      turns.push({ phase, ms: performance.now() - t0, at: Date.now() });
      if (!second.includes(GOODBYE) || !second.includes('<Hangup/>')) problems.push(`call ${n}, turn 1: ${second.slice(0, 200)}`);
    }

    // Sanity: one call end to end (the worker is up).
    await waitUntil('a first call answered end to end', 60_000, async () => {
      try {
        await call('sanity');
        return problems.length === 0;
      } catch (error) {
        problems.length = 0;
        if (String(error).includes('answered 5')) throw error;
        return false;
      }
    });

    const connections = ctx.config.executionsConnections;
    const warmupEnd = Date.now() + ctx.config.warmupS * 1000;
    const end = warmupEnd + ctx.config.durationS * 1000;
    let errors = 0;
    let atStart = null;
    const startCpu = setTimeout(() => (atStart = machineCpu()), Math.max(0, warmupEnd - Date.now()));
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (Date.now() < end) {
          try {
            await call(Date.now() < warmupEnd ? 'warmup' : 'measured');
          } catch (error) {
            errors += 1;
            if (errors <= 3) problems.push(String(error).slice(0, 300));
          }
        }
      }),
    );
    clearTimeout(startCpu);
    const atEnd = machineCpu();
    const windowS = ctx.config.durationS;
    const measured = turns.filter((t) => t.at >= warmupEnd && t.at < end);
    const latencies = measured.map((t) => t.ms);
    const turnsPerS = round(measured.length / windowS, 1);
    const cpu = atStart ? cpuBetween(atStart, atEnd) : null;

    // Open loop at half the closed loop's rate: a call started every 2/rate s (two turns each), on schedule whatever
    // the answers do; the first turn timed from when it was due.
    const rate = Math.max(1, Math.round(turnsPerS / 2));
    const openStart = Date.now() + ctx.config.warmupS * 1000;
    const openEnd = openStart + ctx.config.durationS * 1000;
    const inFlight = [];
    let openErrors = 0;
    {
      const t0 = performance.now();
      const intervalMs = 2000 / rate;
      const totalMs = (ctx.config.warmupS + ctx.config.durationS) * 1000;
      for (let i = 0; i * intervalMs < totalMs; i++) {
        const dueAt = t0 + i * intervalMs;
        const wait = dueAt - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const phase = Date.now() < openStart ? 'open-warmup' : 'open';
        inFlight.push(
          call(phase, dueAt).catch((error) => {
            openErrors += 1;
            if (openErrors <= 3) problems.push(String(error).slice(0, 300));
          }),
        );
      }
      await Promise.all(inFlight);
    }
    const openLatencies = turns.filter((t) => t.phase === 'open' && t.at < openEnd + 15_000).map((t) => t.ms);
    const openP99 = quantile(openLatencies, 0.99);
    console.log(
      `  open loop at ${rate} turns/s offered (${rate / 2} calls/s; half the closed loop's ${turnsPerS}/s): ${openLatencies.length} turns, ` +
        `TwiML answer p50 ${ms(quantile(openLatencies, 0.5))} ms, p99 ${ms(openP99)} ms (target < ${TARGET_P99_MS} ms), ${openErrors} failed calls`,
    );
    const executionsRun = ctx.shared.executions ?? null;
    const ratio = executionsRun?.executions_per_s > 0 ? round(turnsPerS / executionsRun.executions_per_s, 2) : null;
    console.log(
      executionsRun
        ? `  turns/s / executions/s (same invocation): ${turnsPerS} / ${executionsRun.executions_per_s} = ${ratio} (target >= ${TARGET_RATIO_TO_EXECUTIONS})`
        : '  turns/s against executions/s: the executions scenario did not run in this invocation (BENCH_SCENARIOS=executions,voice)',
    );

    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    let service;
    try {
      await waitUntil('every call execution finished', 60_000, async () => (await db.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE status = 'running'`)).rows[0].n === 0);
      service = (
        await db.query(
          `SELECT (SELECT count(*) FROM workflow_executions)::int AS executions,
                  (SELECT count(*) FROM workflow_executions WHERE status <> 'success')::int AS not_successful,
                  (SELECT count(*) FROM voice_calls)::int AS calls,
                  (SELECT count(*) FROM voice_calls WHERE execution_id IS NULL)::int AS calls_without_execution,
                  (SELECT count(*) FROM message_deliveries)::int AS sends`,
        )
      ).rows[0];
    } finally {
      await db.end().catch(() => {});
    }
    const wrong = service.not_successful + service.calls_without_execution + service.sends + Math.abs(service.executions - service.calls);
    console.log(
      `  closed loop (${connections} callers, next call once the last hung up), window ${windowS} s: ${measured.length} turns answered (${turnsPerS}/s, ` +
        `${round(measured.length / 2 / windowS, 1)} calls/s); TwiML answer p50 ${ms(quantile(latencies, 0.5))} ms, p99 ${ms(quantile(latencies, 0.99))} ms; ` +
        `machine CPU ${cpu && measured.length ? round(cpu.busyMs / measured.length, 2) : '-'} ms per turn (${cpu ? Math.round(cpu.utilisation * 100) : '-'}% busy); ` +
        `${errors} failed requests, ${problems.length} unexpected answers; service: ${service.calls} calls, ${service.executions} executions ` +
        `(${service.not_successful} not successful), ${service.sends} sends queued (must be 0)`,
    );
    for (const p of problems.slice(0, 3)) console.log(`    ${p}`);

    return [
      {
        name: 'signed call turns/s (Twilio request -> TwiML once the run waits or ends; p50/p99 = TwiML answer latency)',
        measurement: {
          requests_per_s: turnsPerS,
          requests_total: measured.length,
          p50_ms: ms(quantile(latencies, 0.5)),
          p95_ms: ms(quantile(latencies, 0.95)),
          p99_ms: ms(quantile(latencies, 0.99)),
          errors: errors + problems.length + wrong,
          non_2xx: 0,
          duration_s: windowS,
          connections,
          calls_per_s: round(measured.length / 2 / windowS, 1),
          machine_cpu_ms_per_turn: cpu && measured.length ? round(cpu.busyMs / measured.length, 2) : null,
          machine_cpu_utilisation: cpu?.utilisation ?? null,
          worker_concurrency: WORKER_CONCURRENCY,
          service_check: service,
        },
        ...(executionsRun ? { baseline: { name: 'executions/s (same run)', requests_per_s: executionsRun.executions_per_s }, target_ratio: TARGET_RATIO_TO_EXECUTIONS } : {}),
        note: `each turn waits for a run in the worker process; ${executionsRun ? `ratio ${ratio} to executions/s of this run` : 'executions not run: no ratio'}`,
      },
      {
        name: `TwiML answer latency at ${rate} turns/s offered (open loop, half the closed loop's rate)`,
        measurement: {
          requests_per_s: round(openLatencies.length / ctx.config.durationS, 1),
          offered_per_s: rate,
          requests_total: openLatencies.length,
          p50_ms: ms(quantile(openLatencies, 0.5)),
          p95_ms: ms(quantile(openLatencies, 0.95)),
          p99_ms: ms(openP99),
          errors: openErrors,
          non_2xx: 0,
          duration_s: ctx.config.durationS,
        },
        max_p99_ms: TARGET_P99_MS,
        note: 'first turn of a call timed from its scheduled start, second from the first answer',
      },
    ];
  },
};
