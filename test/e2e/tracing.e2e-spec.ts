import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTrigger } from '../factories/triggers.js';
import { ApiProcess } from '../utils/api-process.js';
import { startFakeAiProvider, type FakeAiProvider } from '../utils/fake-ai-provider.js';
import { HttpsReceiver, selfSignedCertificate } from '../utils/https-receiver.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';

const run = promisify(execFile);

/** A span as the OTLP/HTTP JSON exporter sends it, with its process's role (resource `service.role`). */
interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  role: string;
  service: string;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;
const attributesOf = (list: OtlpAttributes) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue]));

/** A collector on loopback: POST /v1/traces with the exporter's JSON (ExportTraceServiceRequest). */
async function startCollector(): Promise<{ url: string; spans: CollectedSpan[]; close(): Promise<void> }> {
  const spans: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: { resource: { attributes: OtlpAttributes }; scopeSpans: { spans: (Omit<CollectedSpan, 'attributes' | 'role' | 'service'> & { attributes: OtlpAttributes })[] }[] }[];
        };
        for (const rs of body.resourceSpans) {
          const resource = attributesOf(rs.resource.attributes);
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) {
              spans.push({ ...s, parentSpanId: s.parentSpanId || undefined, attributes: attributesOf(s.attributes), role: String(resource['service.role']), service: String(resource['service.name']) });
            }
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const SERVER = 2;

/**
 * Traces (OTEL_EXPORTER_OTLP_ENDPOINT): one inbound message through an API process and a worker
 * process of the built app is one trace, from the HTTP span to the run's job, its nodes, the AI
 * call and the webhook delivery, whose receiver gets the trace in `traceparent`; the worker's log
 * lines written under a span carry its ids. Without the variable the SDK is not loaded at all.
 */
describe('traces', { timeout: 180_000 }, () => {
  const prefix = `${inject('redisKeyPrefix')}:trc`;
  const tls = selfSignedCertificate();
  const receiver = new HttpsReceiver(tls);
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let ai: FakeAiProvider;
  let t: TestApp;
  let org: TestOrganization;
  let api: ApiProcess;
  let worker: WorkerProcess;
  let keyword: string;

  beforeAll(async () => {
    collector = await startCollector();
    ai = await startFakeAiProvider({ content: 'Refunds take 14 days.' });
    await receiver.start();
    const webhookEnv = { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_CA_FILE: tls.certFile };
    // In-process, without tracing (not started through main.js): sets the organization and its resources up.
    t = await startTestApp({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false', REDIS_KEY_PREFIX: prefix, ...webhookEnv });
    org = await createOrganization(t);

    const kb = `trc-kb-${Date.now().toString(36)}`;
    await t.http.put(`/v1/knowledge-bases/${kb}`).set(org.auth('read_write')).send({ entries: [{ question: 'How can I get a refund?', answer: 'Within 14 days.' }] }).expect(201);
    const workflow = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
      name: `traces-${Date.now()}`,
      channel: 'whatsapp',
      configuration: {
        nodes: [
          { id: 'hello', type: 'message', content: 'Hello from the traced flow', next: 'answer' },
          { id: 'answer', type: 'ai_response', knowledge_base: kb },
        ],
      },
    });
    expect(workflow.status).toBe(201);
    const workflowId = workflow.body.data.id as string;
    expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write'))).status).toBe(200);
    keyword = `trc${Date.now().toString(36)}`;
    await createTrigger(t, org, workflowId, 'message', { keywords: [keyword] });
    const hook = await t.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: 'traced', url: receiver.url('/traced'), events: ['workflow.completed'] });
    expect(hook.status).toBe(201);

    const traced = {
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMITS_ENABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'traces-e2e',
      // Spans leave within 100 ms rather than 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...webhookEnv,
    };
    api = await ApiProcess.start(t.config, traced);
    worker = new WorkerProcess(t.config, {
      ...traced,
      LOG_LEVEL: 'info',
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'trace-test-key',
      AI_MODEL: 'fake-model',
      NODE_RETRY_BASE_DELAY_MS: '20',
    });
    worker.start();
    await api.ready();
  }, 150_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await t?.close();
    await Promise.all([collector?.close(), ai?.close(), receiver.stop()]);
    tls.cleanup();
  });

  it('makes one trace of a message: HTTP span → enqueue → run job in the worker → node spans → AI call, webhook delivery with traceparent; worker logs carry trace_id', async () => {
    // The first AI request fails (503): a warning and a retry logged by the worker inside the trace.
    ai.upcoming.push(503);
    const message = `${keyword} how can I get a refund? secret-content-${Date.now()}`;
    const res = await api.fetch('/v1/messages', {
      method: 'POST',
      headers: { ...org.auth('read_write'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ channel: 'whatsapp', customer_id: `+1555${Date.now() % 1_000_000}`, message }),
    });
    expect(res.status).toBe(202);
    // A credential in a query string (refused or not) never reaches a span.
    await api.fetch('/v1/workflows?api_key=probe-credential-value&limit=1', { headers: org.auth('read_only') });
    const executionId = ((await res.json()) as { data: { executions: { workflow_execution_id: string }[] } }).data.executions[0].workflow_execution_id;

    const hit = await waitFor('the webhook delivery', async () => receiver.hits.find((h) => h.path === '/traced' && h.body.includes(executionId)), 60_000, 100);
    const spans = await waitFor(
      'the spans of the run and of the delivery',
      async () => {
        const names = new Set(collector.spans.filter((s) => s.role === 'worker').map((s) => s.name));
        return ['executions.run', 'node message', 'node ai_response', 'ai.complete', 'webhook.deliver'].every((n) => names.has(n)) ? collector.spans : undefined;
      },
      30_000,
      100,
    );

    const http = spans.find((s) => s.role === 'api' && s.kind === SERVER && String(s.attributes['http.target'] ?? s.attributes['url.path'] ?? '').startsWith('/v1/messages'));
    expect(http, JSON.stringify(spans.map((s) => [s.role, s.name, s.kind]))).toBeDefined();
    expect(http!.service).toBe('traces-e2e');
    const traceId = http!.traceId;
    const inTrace = spans.filter((s) => s.traceId === traceId);
    const byId = new Map(inTrace.map((s) => [s.spanId, s]));
    const ancestors = (span: CollectedSpan) => {
      const chain: CollectedSpan[] = [];
      for (let p = span.parentSpanId && byId.get(span.parentSpanId); p; p = p.parentSpanId && byId.get(p.parentSpanId)) chain.push(p);
      return chain;
    };

    // The enqueue under the HTTP span, in the API process.
    const enqueue = inTrace.find((s) => s.name === 'executions.enqueue' && s.attributes['execution.id'] === executionId);
    expect(enqueue?.role).toBe('api');
    expect(ancestors(enqueue!)).toContain(http);
    // The run's job span in the worker: a child of the enqueue, the same trace.
    const runSpan = inTrace.find((s) => s.name === 'executions.run' && s.attributes['execution.id'] === executionId);
    expect(runSpan?.role).toBe('worker');
    expect(runSpan!.parentSpanId).toBe(enqueue!.spanId);
    expect(runSpan!.attributes['execution.status']).toBe('success');
    // One span per node, children of the run.
    const nodes = inTrace.filter((s) => s.name.startsWith('node '));
    expect(nodes.map((s) => [s.attributes['node.id'], s.attributes['node.type'], s.attributes['node.status']]).sort()).toEqual([
      ['answer', 'ai_response', 'completed'],
      ['hello', 'message', 'completed'],
    ]);
    for (const node of nodes) expect(node.parentSpanId).toBe(runSpan!.spanId);
    // Two AI calls (the 503, then the answer) under the ai_response node.
    const aiNode = nodes.find((s) => s.attributes['node.type'] === 'ai_response')!;
    const aiCalls = inTrace.filter((s) => s.name === 'ai.complete');
    expect(aiCalls).toHaveLength(2);
    for (const call of aiCalls) {
      expect(call.parentSpanId).toBe(aiNode.spanId);
      expect(call.attributes).toMatchObject({ 'ai.provider': 'openai', 'ai.model': 'fake-model' });
    }
    // The instrumentations patched the ES modules: the run's commit statement under the run, the API's
    // statements and its Redis commands (the enqueue's MULTI) under the HTTP span.
    const commit = inTrace.find((s) => s.role === 'worker' && s.attributes['db.system.name'] === 'postgresql' && s.attributes['db.postgresql.plan'] === 'runs.commit');
    expect(commit && ancestors(commit)).toContain(runSpan);
    expect(inTrace.some((s) => s.role === 'api' && s.attributes['db.system.name'] === 'postgresql' && ancestors(s).includes(http!))).toBe(true);
    expect(inTrace.some((s) => s.role === 'api' && s.attributes['db.system.name'] === 'redis' && ancestors(s).includes(enqueue!))).toBe(true);
    // Statements' text only: no span of the worker's polls outside a trace (requireParentSpan).
    expect(spans.filter((s) => s.attributes['db.system.name'] !== undefined && !s.parentSpanId)).toEqual([]);

    // The delivery: a span of the same trace under the run, and the receiver's traceparent names it.
    const deliver = inTrace.find((s) => s.name === 'webhook.deliver');
    expect(deliver, 'the webhook delivery span is in the trace').toBeDefined();
    expect(ancestors(deliver!)).toContain(runSpan);
    expect(deliver!.attributes).toMatchObject({ 'webhook.event_type': 'workflow.completed', 'webhook.outcome': 'delivered', 'http.response.status_code': 200 });
    const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(hit.headers.traceparent ?? '');
    expect(traceparent, `traceparent header: ${hit.headers.traceparent}`).not.toBeNull();
    expect(traceparent![1]).toBe(traceId);

    // Nothing of the message, the AI key or the answer in any attribute.
    const values = JSON.stringify(spans.map((s) => s.attributes));
    const probe = spans.find((s) => s.kind === SERVER && s.attributes['url.path'] === '/v1/workflows');
    expect(probe?.attributes['url.query']).toBe('api_key=[REDACTED]&limit=1');
    for (const secret of [message, 'secret-content', 'trace-test-key', 'Refunds take 14 days', 'Hello from the traced flow', org.keys.read_write, 'probe-credential-value']) {
      expect(values).not.toContain(secret);
    }

    // The worker's log lines written in the trace carry its ids (the AI warning and the node's retry).
    const lines = worker.output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; trace_id?: string; span_id?: string });
    const traced = lines.filter((l) => l.trace_id === traceId);
    expect(traced.map((l) => l.msg).join('\n')).toMatch(/AI provider answered HTTP 503/);
    expect(traced.every((l) => byId.has(l.span_id ?? '') || /^[0-9a-f]{16}$/.test(l.span_id ?? ''))).toBe(true);
    // Start-up lines (no span active) carry none.
    expect(lines.some((l) => l.trace_id === undefined)).toBe(true);
  });
});

describe('tracing off', { timeout: 60_000 }, () => {
  /**
   * The SDK is CommonJS: once imported, even from an ES module, its files are in the CommonJS module
   * cache (require.cache). A child process runs the built start-up step exactly as main.js does and
   * lists what of OpenTelemetry it loaded: with the variable unset, none of the SDK, the exporter,
   * the instrumentations or the import hook; with it set, the SDK (so this check can fail).
   */
  const loadedAfterStart = async (env: Record<string, string>) => {
    const script = `
      import { createRequire } from 'node:module';
      const { AppConfig } = await import('./dist/src/config/app-config.js');
      const { startTracing } = await import('./dist/src/tracing/start-tracing.js');
      await startTracing(AppConfig.fromEnv());
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /@opentelemetry|import-in-the-middle|require-in-the-middle/.test(f));
      process.stdout.write(JSON.stringify(loaded.map((f) => f.replace(/^.*node_modules\\//, ''))));
      process.exit(0);`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 });
    return JSON.parse(stdout) as string[];
  };

  it('loads nothing of the SDK without OTEL_EXPORTER_OTLP_ENDPOINT, and the SDK with it', async () => {
    expect(await loadedAfterStart({})).toEqual([]);
    const on = await loadedAfterStart({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(on.some((f) => f.startsWith('@opentelemetry/sdk-node/'))).toBe(true);
    expect(on.some((f) => f.startsWith('@opentelemetry/instrumentation-pg/'))).toBe(true);
  });
});
