// Conversations through WhatsApp end to end: Meta's signed webhook POST /v1/channel-accounts/{id}/webhook (one text
// from a new customer) -> applied by the api process, then 200 -> the keyword trigger starts an execution -> the
// worker process runs its two message nodes -> the channel sender (worker) sends both replies, in order, to the
// WhatsApp Cloud API, here a fake Graph API in the bench process (lib/whatsapp.mjs) that records every message it
// accepts. A conversation is complete when the fake has accepted both replies for its customer.
//
// The app is booted as in the executions scenario (api + worker, WORKER_CONCURRENCY=10, same workflow and trigger),
// with WHATSAPP_API_URL at the fake and CHANNEL_SEND_RATE=10000 per account, so that the service's own per-account
// send limit (80/s by default) is not what is measured.
//
//   1. closed loop: BENCH_EXECUTIONS_CONNECTIONS clients (as executions), each posting its next customer's signed
//      payload once its last webhook POST was answered, as executions' clients do with the 202
//      (BENCH_CHANNELS_PACE=conversation: once its last conversation completed; lib/closed-loop.mjs, whose in-flight
//      POSTs finish at the deadline rather than being hung up on). Conversations completed per second in the window (second reply
//      accepted by the fake within it) and machine CPU per completed conversation (lib/cpu.mjs, as executions).
//   2. open loop (lib/open-loop.mjs) at half the closed loop's rate: inbound -> first reply latency, from when each
//      POST was due to the fake accepting the first reply; target p99 < 300 ms.
//   3. correctness over the whole run (sanity, warm-ups, both loops), from the fake's record once the service has
//      settled: lost (a customer whose POST was answered 200 without both replies), duplicated (a reply text twice
//      to one customer), out of order (the second reply before the first); each must be 0.
//   4. conversations/s against the executions scenario's executions/s when both ran in this invocation (target >= 0.8;
//      BENCH_CHANNELS_ROUNDS runs the two turn about and pools the ratio, bench/run.mjs).
import pg from 'pg';
import { performance } from 'node:perf_hooks';
import { measureClosedLoop } from '../lib/closed-loop.mjs';
import { cpuBetween, machineCpu, processesCpu, processesCpuBetween } from '../lib/cpu.mjs';
import { createBenchWorkflow, MESSAGE, REPLIES, startApiAndWorker, waitUntil, WORKER_CONCURRENCY } from '../lib/executions-workflow.mjs';
import { quantile, round } from '../lib/load.mjs';
import { measureOpenLoop } from '../lib/open-loop.mjs';
import { benchCredentials, createWhatsAppAccount, metaSignature, startFakeWhatsApp, whatsappTextPayload } from '../lib/whatsapp.mjs';

/** Sends per second per account: far above what the machine reaches, so the limit is not what is measured. */
const SEND_RATE = 10_000;
const TARGET_RATIO_TO_EXECUTIONS = 0.8;
const TARGET_FIRST_REPLY_P99_MS = 300;
const DRAIN_TIMEOUT_MS = 180_000;
/**
 * When a closed-loop client sends its next payload: once its webhook POST was answered (`answer`, the default), as
 * executions' clients send their next message on the 202, so that the two scenarios offer load alike and their ratio
 * compares what each path sustains; the webhook answers once the payload is applied (its execution queued), and the
 * run and the sends come after. Or once its last conversation completed (`conversation`): at most `connections`
 * conversations in flight, so the figure is connections / the end-to-end latency of a conversation rather than what
 * the service sustains (that latency is the open loop's row).
 */
function paceFromEnv() {
  const pace = (process.env.BENCH_CHANNELS_PACE ?? '').trim() || 'answer';
  if (!['answer', 'conversation'].includes(pace)) throw new Error(`BENCH_CHANNELS_PACE must be answer or conversation (got ${JSON.stringify(pace)})`);
  return pace;
}
const PACED_BY = { answer: 'the next payload when the last webhook POST was answered', conversation: 'the next payload when the last conversation completed' };

/**
 * Every simulated customer's conversation, fed by the load generators (posted, answered) and by the fake (reply).
 * Times: `dueAt`, `firstT`, `doneT` are performance.now() of this process; `sentAt`, `doneAt` epoch ms.
 */
class Conversations {
  constructor(replies) {
    this.replies = replies;
    this.byCustomer = new Map();
    this.completions = [];
    this.unexpected = 0;
  }

  posted(customer, phase, dueAt) {
    const c = { phase, dueAt, sentAt: Date.now(), status: undefined, texts: [], firstT: null, doneT: null, doneAt: null };
    c.done = new Promise((resolve) => (c.resolveDone = resolve));
    this.byCustomer.set(customer, c);
    return c;
  }

  /** One message the fake accepted. */
  reply({ t, at, to, text }) {
    const c = this.byCustomer.get(to);
    if (!c || !this.replies.includes(text)) {
      this.unexpected += 1;
      return;
    }
    c.texts.push(text);
    if (c.firstT === null) c.firstT = t;
    if (c.doneT === null && this.replies.every((r) => c.texts.includes(r))) {
      c.doneT = t;
      c.doneAt = at;
      this.completions.push(at);
      c.resolveDone();
    }
  }

  completedBetween(start, end) {
    let n = 0;
    for (const at of this.completions) if (at >= start && at < end) n += 1;
    return n;
  }

  /** Posted and not complete: in flight, or answered 200 and waiting for replies. */
  outstanding() {
    let n = 0;
    for (const c of this.byCustomer.values()) if (c.doneT === null && (c.status === undefined || c.status === 200)) n += 1;
    return n;
  }

  inPhase(phase, window) {
    return [...this.byCustomer.values()].filter((c) => c.phase === phase && (!window || (c.sentAt >= window.start && c.sentAt < window.end)));
  }

  check() {
    const [first, second] = this.replies;
    let lost = 0;
    let duplicated = 0;
    let outOfOrder = 0;
    let notAnswered = 0;
    for (const c of this.byCustomer.values()) {
      if (c.status !== 200) notAnswered += 1;
      else if (c.doneT === null) lost += 1;
      if (new Set(c.texts).size !== c.texts.length) duplicated += 1;
      const i = c.texts.indexOf(first);
      const j = c.texts.indexOf(second);
      if (j !== -1 && (i === -1 || j < i)) outOfOrder += 1;
    }
    return { conversations: this.byCustomer.size, lost, duplicated, out_of_order: outOfOrder, unexpected: this.unexpected, not_answered_200: notAnswered };
  }
}

/** What the service still has to do: stored payloads not applied, running executions, sends queued or being sent. */
async function pending(db) {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM channel_webhook_payloads)::int AS payloads,
            (SELECT count(*) FROM workflow_executions WHERE status = 'running')::int AS running,
            (SELECT count(*) FROM message_deliveries WHERE status IN ('queued', 'sending'))::int AS sends`,
  );
  return rows[0];
}

/**
 * Until every conversation is complete and the service has nothing left to do, or the service has had nothing
 * left to do for three looks (then the replies still missing will not come: lost), or the timeout.
 */
async function settle(db, conversations) {
  const start = Date.now();
  for (let idleLooks = 0; ; ) {
    const p = await pending(db);
    const idle = p.payloads + p.running + p.sends === 0;
    idleLooks = idle ? idleLooks + 1 : 0;
    if ((idle && conversations.outstanding() === 0) || idleLooks >= 3 || Date.now() - start > DRAIN_TIMEOUT_MS) {
      return { s: round((Date.now() - start) / 1000, 1), settled: idle, pending: p };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The service's own record: executions not successful, sends not accepted, sends attempted more than once. */
async function databaseCheck(db) {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM workflow_executions)::int AS executions,
            (SELECT count(*) FROM workflow_executions WHERE status <> 'success')::int AS not_successful,
            (SELECT count(*) FROM message_deliveries)::int AS sends,
            (SELECT count(*) FROM message_deliveries WHERE status <> 'sent')::int AS not_sent,
            (SELECT count(*) FROM message_deliveries WHERE attempts > 1)::int AS retried`,
  );
  return rows[0];
}

const ms = (v) => (v === null || v === undefined ? null : round(v, 1));

export default {
  name: 'channels',
  description: `signed WhatsApp webhook -> execution -> both replies accepted by a fake Graph API; api process + worker process (concurrency ${WORKER_CONCURRENCY})`,

  async run(ctx) {
    const pace = paceFromEnv();
    const credentials = benchCredentials();
    const conversations = new Conversations(REPLIES);
    const fake = await startFakeWhatsApp({ accessToken: credentials.access_token, onMessage: (r) => conversations.reply(r) });
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    let connected = false;
    try {
      const { api, worker } = await startApiAndWorker(ctx, { WHATSAPP_API_URL: fake.url, CHANNEL_SEND_RATE: String(SEND_RATE) });
      await createBenchWorkflow(ctx, api.url);
      const account = await createWhatsAppAccount(ctx, api.url, { name: 'bench channels', credentials });
      await db.connect();
      connected = true;
      if (process.env.BENCH_EXPERIMENT_SQL) {
        // A what-if (bench/README.md), as in `executions`: run on the migrated database before any load.
        console.log(`  EXPERIMENT: ${process.env.BENCH_EXPERIMENT_SQL}`);
        await db.query(process.env.BENCH_EXPERIMENT_SQL);
      }
      console.log(
        `  one WhatsApp account; WHATSAPP_API_URL = the bench's fake Graph API; CHANNEL_SEND_RATE=${SEND_RATE} per account ` +
          `(the service's send limit set out of reach: it is not what is measured); CHANNEL_SEND_CONCURRENCY default`,
      );

      const webhookPath = `/v1/channel-accounts/${account.id}/webhook`;
      let customers = 0;
      // Each request a new customer (a distinct wa_id) with one signed text message.
      const inbound = (phase, dueAt = performance.now()) => {
        const n = customers++;
        const from = String(491_000_000_000 + n);
        const body = whatsappTextPayload(credentials.phone_number_id, { from, id: `wamid.benchin.${n}`, text: MESSAGE });
        const c = conversations.posted(from, phase, dueAt);
        return {
          method: 'POST',
          path: webhookPath,
          body,
          headers: { 'x-hub-signature-256': metaSignature(credentials.app_secret, body) },
          answered: (status) => (c.status = status),
          // BENCH_CHANNELS_PACE=conversation: the closed loop's client waits for the conversation too.
          until: pace === 'conversation' ? (status) => (status === 200 ? c.done : undefined) : undefined,
          from,
        };
      };
      const jsonHeaders = { 'content-type': 'application/json' };

      // Sanity: one conversation end to end, the worker and the sender now known to be up.
      const sanity = inbound('sanity');
      const res = await fetch(`${api.url}${sanity.path}`, { method: 'POST', headers: { ...jsonHeaders, ...sanity.headers }, body: sanity.body, signal: AbortSignal.timeout(15_000) });
      const answer = await res.text();
      sanity.answered(res.status);
      if (res.status !== 200) throw new Error(`POST ${webhookPath} answered ${res.status}: ${answer.slice(0, 500)}`);
      await waitUntil(`both replies of the sanity conversation at the fake (worker ${worker.process.running ? 'running' : 'exited'})`, 60_000, async () => {
        if (!worker.process.running) throw new Error(`the worker exited:\n${worker.process.log()}`);
        if (fake.refused > 0) throw new Error(`the fake Graph API refused ${fake.refused} send(s)`);
        return conversations.byCustomer.get(sanity.from).doneT !== null;
      });

      // 1. Closed loop.
      let atStart = null;
      let atEnd = null;
      // Beside the machine's CPU, each process's own (api, worker, this process: load generator and fake, PostgreSQL
      // backends of the scenario's database): where a conversation's cost goes. Not Redis.
      const pids = { api: api.process.child.pid, worker: worker.process.child.pid, bench: process.pid };
      const snapshot = () => ({ cpu: machineCpu(), processes: processesCpu(db, pids), outstanding: conversations.outstanding() });
      const closed = await measureClosedLoop(
        {
          url: api.url,
          headers: jsonHeaders,
          connections: ctx.config.executionsConnections,
          durationS: ctx.config.durationS,
          warmupS: ctx.config.warmupS,
          request: () => inbound('closed'),
        },
        {
          // The backlog left by the warm-up is part of the window (in flight at start), as in executions.
          beforeMeasured: async () => {
            atStart = { ...snapshot(), db: await pending(db) };
          },
          atEnd: () => {
            atEnd = snapshot();
          },
        },
      );
      const pendingAtEnd = await pending(db);
      const cpu = cpuBetween(atStart.cpu, atEnd.cpu);
      const byProcess = processesCpuBetween(await atStart.processes, await atEnd.processes);
      const windowS = (closed.window.end - closed.window.start) / 1000;
      const completed = conversations.completedBetween(closed.window.start, closed.window.end);
      const completedPerS = round(completed / windowS, 1);
      const inWindow = conversations.inPhase('closed').filter((c) => c.doneAt !== null && c.doneAt >= closed.window.start && c.doneAt < closed.window.end);
      const endToEnd = inWindow.map((c) => c.doneT - c.dueAt);
      const cpuMsPerConversation = cpu && completed > 0 ? round(cpu.busyMs / completed, 2) : null;
      const processMs = Object.fromEntries(Object.entries(byProcess).map(([k, v]) => [k, completed > 0 ? round(v / completed, 2) : null]));
      const growthPerS = round((atEnd.outstanding - atStart.outstanding) / windowS, 1);
      const keepsUp = atEnd.outstanding - atStart.outstanding <= Math.max(2 * WORKER_CONCURRENCY, 0.02 * closed.requests_total);
      const drained = await settle(db, conversations);
      // The same from the window's start until the service settled: every conversation in flight at the start or posted
      // in the window, completed. Beside the window's figure, which charges a growing backlog's work to the conversations
      // completed in the window.
      const throughSettled = conversations.completedBetween(closed.window.start, Infinity);
      const cpuToSettled = cpuBetween(atStart.cpu, machineCpu());
      const cpuMsToSettled = cpuToSettled && throughSettled > 0 ? round(cpuToSettled.busyMs / throughSettled, 2) : null;
      console.log(
        `  closed loop (${closed.connections} connections, ${PACED_BY[pace]}), window ${round(windowS, 1)} s: webhook 200s ${closed.requests_total - closed.errors - closed.non_2xx} ` +
          `(${closed.requests_per_s}/s; 200 p50 ${ms(closed.p50_ms)} ms, p99 ${ms(closed.p99_ms)} ms), conversations completed ${completed} (${completedPerS}/s; ` +
          `webhook -> 2nd reply p50 ${ms(quantile(endToEnd, 0.5))} ms, p99 ${ms(quantile(endToEnd, 0.99))} ms); ` +
          `conversations in flight ${atStart.outstanding} -> ${atEnd.outstanding} (${growthPerS >= 0 ? '+' : ''}${growthPerS}/s); at the end: ` +
          `${pendingAtEnd.payloads} payloads stored not applied, ${pendingAtEnd.running} executions running, ${pendingAtEnd.sends} sends queued/sending; ` +
          `settled in ${drained.s} s; machine CPU ${cpuMsPerConversation} ms per conversation (${cpu ? Math.round(cpu.utilisation * 100) : '-'}% busy; ` +
          `of it api ${processMs.api}, worker ${processMs.worker}, PostgreSQL ${processMs.postgres}, bench process (load + fake) ${processMs.bench} ms); ` +
          `${cpuMsToSettled} ms per conversation from the window's start until settled (${throughSettled} conversations)`,
      );

      // 2. Open loop at half the closed loop's rate.
      const rate = Math.max(1, Math.round(completedPerS / 2));
      const open = await measureOpenLoop({
        url: api.url,
        headers: jsonHeaders,
        rate,
        durationS: ctx.config.durationS,
        warmupS: ctx.config.warmupS,
        request: (_i, dueAt) => inbound('open', dueAt),
      });
      const drainedOpen = await settle(db, conversations);
      const measuredOpen = conversations.inPhase('open', open.window);
      const firstReply = measuredOpen.filter((c) => c.firstT !== null).map((c) => c.firstT - c.dueAt);
      const bothReplies = measuredOpen.filter((c) => c.doneT !== null).map((c) => c.doneT - c.dueAt);
      const withoutFirstReply = measuredOpen.length - firstReply.length;
      const openCompletedPerS = round(bothReplies.length / open.duration_s, 1);
      const firstP99 = quantile(firstReply, 0.99);
      console.log(
        `  open loop at ${rate}/s offered (half the closed loop's ${completedPerS}/s): inbound -> first reply p50 ${ms(quantile(firstReply, 0.5))} ms, ` +
          `p99 ${ms(firstP99)} ms (target < ${TARGET_FIRST_REPLY_P99_MS} ms), max ${ms(firstReply.length ? firstReply.reduce((a, b) => Math.max(a, b)) : null)} ms; ` +
          `both replies p50 ${ms(quantile(bothReplies, 0.5))} ms, p99 ${ms(quantile(bothReplies, 0.99))} ms; ${measuredOpen.length} conversations ` +
          `(${withoutFirstReply} without a first reply), ${openCompletedPerS}/s completed; webhook 200 p50 ${open.p50_ms} ms, p99 ${open.p99_ms} ms; ` +
          `timed from when each POST was due (the generator sent late by up to ${open.send_lag_p99_ms} ms at p99); settled in ${drainedOpen.s} s`,
      );

      // 3. Correctness over the whole run, from the fake's record once the service has settled.
      const check = conversations.check();
      const service = await databaseCheck(db);
      const problems = check.lost + check.duplicated + check.out_of_order + check.unexpected + check.not_answered_200 + fake.refused;
      const unsettled = drainedOpen.settled ? '' : ` NOT SETTLED after ${DRAIN_TIMEOUT_MS / 1000} s: ${JSON.stringify(drainedOpen.pending)};`;
      console.log(
        `  correctness over the run (${check.conversations} conversations, ${fake.received.length} messages accepted by the fake):${unsettled} ` +
          `lost ${check.lost}, duplicated ${check.duplicated}, out of order ${check.out_of_order}; unexpected replies ${check.unexpected}, ` +
          `webhook POSTs not answered 200 ${check.not_answered_200}, sends refused by the fake ${fake.refused}; service: ${service.executions} executions ` +
          `(${service.not_successful} not successful), ${service.sends} sends (${service.not_sent} not sent, ${service.retried} attempted more than once); ` +
          `the app opened ${fake.connections} connections to the fake`,
      );

      // 4. Against the executions scenario of this invocation.
      const executions = ctx.shared.executions ?? null;
      const ratio = executions?.executions_per_s > 0 ? round(completedPerS / executions.executions_per_s, 2) : null;
      console.log(
        executions
          ? `  conversations/s / executions/s (same invocation): ${completedPerS} / ${executions.executions_per_s} = ${ratio} (target >= ${TARGET_RATIO_TO_EXECUTIONS}); ` +
              `machine CPU per conversation / per execution: ${cpuMsPerConversation} / ${executions.machine_cpu_ms_per_execution} ms` +
              (executions.idle_channel_account ? ' (executions ran with an idle channel account)' : '')
          : `  conversations/s against executions/s: the executions scenario did not run in this invocation (BENCH_SCENARIOS=executions,channels)`,
      );

      return [
        {
          name: `conversations/s (signed WhatsApp webhook -> both replies at the fake Graph API; p50/p99 = webhook -> 2nd reply)`,
          measurement: {
            requests_per_s: completedPerS,
            requests_total: completed,
            p50_ms: ms(quantile(endToEnd, 0.5)),
            p95_ms: ms(quantile(endToEnd, 0.95)),
            p99_ms: ms(quantile(endToEnd, 0.99)),
            // Correctness over the whole run: each a conversation gone wrong.
            errors: problems + service.not_successful + service.not_sent,
            non_2xx: 0,
            duration_s: round(windowS, 2),
            connections: closed.connections,
            paced_by: pace,
            webhook: { answered_per_s: closed.requests_per_s, p50_ms: closed.p50_ms, p99_ms: closed.p99_ms, errors: closed.errors, non_2xx: closed.non_2xx },
            in_flight_start: atStart.outstanding,
            in_flight_end: atEnd.outstanding,
            in_flight_growth_per_s: growthPerS,
            keeps_up: keepsUp,
            pending_at_end: pendingAtEnd,
            settle_s: drained.s,
            worker_concurrency: WORKER_CONCURRENCY,
            channel_send_rate: SEND_RATE,
            machine_cpu_ms_per_conversation: cpuMsPerConversation,
            machine_cpu_utilisation: cpu?.utilisation ?? null,
            process_cpu_ms_per_conversation: processMs,
            machine_cpu_ms_per_conversation_until_settled: cpuMsToSettled,
            correctness: { ...check, refused_by_fake: fake.refused, messages_accepted: fake.received.length, settled: drainedOpen.settled },
            fake_connections: fake.connections,
            service_check: service,
            executions_per_s_same_run: executions?.executions_per_s ?? null,
            ratio_to_executions: ratio,
          },
          ...(executions ? { baseline: { name: 'executions/s (same run)', requests_per_s: executions.executions_per_s }, target_ratio: TARGET_RATIO_TO_EXECUTIONS } : {}),
          note:
            `lost ${check.lost}, duplicated ${check.duplicated}, out of order ${check.out_of_order}; ` +
            (pace === 'conversation'
              ? `at most ${closed.connections} conversations in flight`
              : keepsUp
                ? 'the service keeps up with the webhooks answered'
                : `falls behind: +${growthPerS} conversations in flight/s`) +
            (executions ? `; ratio to executions/s of this run` : '; executions not run: no ratio'),
        },
        {
          name: `inbound -> first reply at ${rate}/s offered (open loop, half the closed loop's rate)`,
          measurement: {
            requests_per_s: openCompletedPerS,
            offered_per_s: rate,
            requests_total: measuredOpen.length,
            p50_ms: ms(quantile(firstReply, 0.5)),
            p90_ms: ms(quantile(firstReply, 0.9)),
            p95_ms: ms(quantile(firstReply, 0.95)),
            p99_ms: ms(firstP99),
            max_ms: firstReply.length ? ms(firstReply.reduce((a, b) => Math.max(a, b))) : null,
            both_replies_p50_ms: ms(quantile(bothReplies, 0.5)),
            both_replies_p99_ms: ms(quantile(bothReplies, 0.99)),
            errors: open.errors + withoutFirstReply,
            non_2xx: open.non_2xx,
            duration_s: open.duration_s,
            webhook: { p50_ms: open.p50_ms, p99_ms: open.p99_ms },
            send_lag_p99_ms: open.send_lag_p99_ms,
            window: open.window,
          },
          max_p99_ms: TARGET_FIRST_REPLY_P99_MS,
          note: 'timed from when each POST was due to the fake accepting the first reply',
        },
      ];
    } finally {
      if (connected) await db.end().catch(() => {});
      await fake.close();
    }
  },
};
