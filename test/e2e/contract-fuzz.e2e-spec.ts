import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workflowBody } from '../factories/workflows.js';
import { closeAgent, send, type WireRequest } from '../fuzz/http-client.js';
import { listOperations, type OpenApiDocument, type Operation } from '../fuzz/openapi.js';
import type { Pools } from '../fuzz/requests.js';
import { ResponseChecker, type ReceivedResponse } from '../fuzz/response-checker.js';
import { formatFailure, fuzzOperation, settingsFromEnv, type Failure, type FuzzTarget, type OperationResult } from '../fuzz/runner.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * The contract fuzzer (docs/DECISIONS.md, "Tests and tooling"): every operation of the served /openapi.json, with valid and invalid
 * requests, a Full Access key, a read-only key, an invalid key and none. Fails on a 5xx, an
 * undocumented status, a body off its schema, a leak (stack, SQL, path), a hang, or a secured
 * operation succeeding without the right credential.
 *
 * FUZZ_SEED replays a run, FUZZ_ONLY narrows it to operations whose key contains the text,
 * FUZZ_SECONDS / FUZZ_RUNS make it longer (`npm run fuzz`), FUZZ_VERBOSE=1 prints the statuses seen.
 */
const settings = settingsFromEnv(process.env);
const SETUP_MS = 60_000;

describe('contract fuzzer', () => {
  let t: TestApp;
  let org: TestOrganization;
  let port: number;
  let document: OpenApiDocument;
  let pools: Pools = {};
  let seedRound = 0;
  let checker: ResponseChecker;
  /** The seeding requests are valid ones: their answers are checked against the document too. */
  const seedFailures: Failure[] = [];

  beforeAll(async () => {
    // The webhook path's 100/min per trigger is part of the contract (429 is documented there).
    // Webhook deliveries and tests may reach loopback only: no fuzzed URL can send traffic out.
    // Rate limits enabled as in production (their headers and 429 are part of the contract), with
    // figures out of reach of the fuzzer's volume, under a key prefix of its own: its thousands of
    // 401s from 127.0.0.1 must not lock that address out of the next test files.
    t = await startTestApp({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      WEBHOOK_TIMEOUT_MS: '1000',
      ...RATE_LIMITS_OUT_OF_REACH,
      REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:fuzz`,
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    org = await createOrganization(t);
    const served = await send(port, { method: 'GET', path: '/openapi.json', headers: { accept: 'application/json' } }, 10_000);
    expect(served.status).toBe(200);
    document = JSON.parse(served.text) as OpenApiDocument;
    checker = new ResponseChecker(document);
    pools = await seed();
  }, SETUP_MS);

  afterAll(async () => {
    closeAgent();
    await t?.close();
  });

  /** A JSON call through the API for seeding; any answer other than `expected` stops the run (the seed is not fuzzed). */
  async function call(method: string, path: string, body: unknown, expected: number[], credential: 'full_access' | 'read_only' = 'full_access') {
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${org.keys[credential]}` };
    let payload: Buffer | undefined;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = Buffer.from(JSON.stringify(body));
    }
    const wire = { method, path, headers, body: payload };
    const res = await send(port, wire, 10_000);
    checkSeedAnswer(wire, res, credential);
    if (!expected.includes(res.status)) throw new Error(`seeding: ${method} ${path} answered ${res.status} ${res.text.slice(0, 300)}`);
    return res.text === '' ? undefined : (JSON.parse(res.text) as { data?: Record<string, unknown> } & Record<string, unknown>);
  }

  function checkSeedAnswer(wire: WireRequest, res: ReceivedResponse, credential: 'full_access' | 'read_only' | 'none') {
    const operation = findOperation(listOperations(document), wire.method, wire.path);
    if (operation === undefined) {
      seedFailures.push({ operation: `${wire.method} ${wire.path}`, problem: 'the route answers but the document has no operation for it', wire, response: res, seed: settings.seed, runs: 0 });
      return;
    }
    const problems = checker.check({ operation, method: wire.method, credential, requestText: wire.body?.toString('utf8') ?? '' }, res);
    const problem = problems[0];
    // Once per operation and kind of problem (re-seeding repeats the same requests).
    const kind = (text: string) => text.replace(/^\(seeding, a valid request\) /, '').split(';')[0];
    if (problem !== undefined && !seedFailures.some((f) => f.operation === operation.key && kind(f.problem) === kind(problem))) {
      seedFailures.push({ operation: operation.key, problem: `(seeding, a valid request) ${problem}`, wire, response: res, seed: settings.seed, runs: 0 });
    }
  }

  /**
   * Real resources, so that path parameters and `*_id` properties sometimes name something that
   * exists: an active workflow with nodes and a draft one, a trigger of each type (a webhook with and
   * without secret, an api trigger), a knowledge base, a customer with executions, a pet, a spare API key.
   */
  async function seed(): Promise<Pools> {
    const round = ++seedRound;
    const tag = `${round}-${Date.now()}`;
    const active = (await call('POST', '/v1/workflows', workflowBody({ name: `fuzz active ${tag}` }), [201]))!.data!.id as string;
    const draft = (await call('POST', '/v1/workflows', workflowBody({ name: `fuzz draft ${tag}`, configuration: undefined }), [201]))!.data!.id as string;
    await call('POST', `/v1/workflows/${active}/activate`, undefined, [200]);

    const trigger = async (type: string, configuration: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      (await call('POST', '/v1/triggers', { name: `fuzz ${type} ${tag} ${Object.keys(configuration).join('-')}`, type, workflow_id: active, configuration, ...extra }, [201]))!.data!.id as string;
    const webhookOpen = await trigger('webhook', { method: 'POST' });
    const webhookSigned = await trigger('webhook', { method: 'POST', secret: 'fuzz-secret-0123456789abcdef' });
    const api = await trigger('api', { rate_limit: 1000 });
    const message = await trigger('message', { keywords: ['help', 'fuzz'] }, { channel: 'whatsapp' });
    const schedule = await trigger('schedule', { cron_expression: '30 3 1 1 *', timezone: 'Europe/Paris' });
    for (const id of [webhookOpen, webhookSigned, api, message, schedule]) await call('POST', `/v1/triggers/${id}/activate`, undefined, [200]);

    await call('PUT', '/v1/knowledge-bases/faq', { entries: [{ question: 'How do I reset my password?', answer: 'Use the link on the sign-in page.' }] }, [200, 201]);

    const customer = `+1555${String(round).padStart(7, '0')}`;
    const inbound = (await call('POST', '/v1/messages', { channel: 'whatsapp', customer_id: customer, message: 'help please' }, [202]))!.data as {
      executions: { trigger_execution_id: string | null; workflow_execution_id: string | null }[];
    };
    const fired = (await call('POST', `/v1/triggers/${api}/fire`, { customer_id: customer, channel: 'whatsapp', message: 'fuzz' }, [202]))!.data as {
      trigger_execution_id: string | null;
      workflow_execution_id: string | null;
    };
    const executions = [...inbound.executions, fired];

    const petWire = { method: 'POST', path: '/pet', headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`name=fuzz-${tag}&status=available`) };
    const pet = await send(port, petWire, 10_000);
    checkSeedAnswer(petWire, pet, 'none');
    if (pet.status !== 201) throw new Error(`seeding: POST /pet answered ${pet.status} ${pet.text}`);
    const petId = String((JSON.parse(pet.text) as { data: { id: number } }).data.id);

    // Port 9 on loopback: nothing listens, so tests and deliveries fail fast with "connection refused".
    const webhook = (await call('POST', '/v1/webhooks', { name: `fuzz hook ${tag}`, url: `https://127.0.0.1:9/fuzz/${tag}`, events: ['workflow.*'] }, [201]))!.data!.id as string;
    await call('POST', `/v1/webhooks/${webhook}/test`, { event_type: 'workflow.completed', test_data: {} }, [200]);
    const webhookLog = ((await call('GET', `/v1/webhooks/${webhook}/logs`, undefined, [200])) as unknown as { data: { id: string }[] }).data[0]!.id;

    const apiKey = (await call('POST', '/v1/api-keys', { name: `fuzz spare ${tag}`, permission_level: 'read_only' }, [201]))!.data!.id as string;
    // OAuth clients, so that the authorization endpoint's form and the token endpoint meet a real client and redirect URI.
    const redirectUri = `https://127.0.0.1:9/fuzz/${tag}/callback`;
    const oauthClients = [
      (await call('POST', '/v1/oauth/clients', { name: `fuzz app ${tag}`, redirect_uris: [redirectUri], scopes: ['workflows:read', 'triggers:read'] }, [201]))!.data!.id as string,
      (await call('POST', '/v1/oauth/clients', { name: `fuzz spa ${tag}`, redirect_uris: [redirectUri], scopes: ['workflows:read'], token_endpoint_auth_method: 'none' }, [201]))!.data!.id as string,
    ];

    const ids = (list: (string | null)[]) => list.filter((id): id is string => typeof id === 'string');
    const triggers = [webhookOpen, api, message, schedule, webhookSigned];
    return {
      workflow_id: [active, draft],
      trigger_id: triggers,
      'hooks:trigger_id': [webhookOpen, webhookSigned, webhookOpen, message],
      'triggers:trigger_id': triggers,
      'workflows:execution_id': ids(executions.map((e) => e.workflow_execution_id)),
      'triggers:execution_id': ids(executions.map((e) => e.trigger_execution_id)),
      execution_id: ids(executions.flatMap((e) => [e.workflow_execution_id, e.trigger_execution_id])),
      customer_id: [customer],
      'knowledge-bases:name': ['faq'],
      kb_name: ['faq'],
      petId: [petId],
      'api-keys:id': [apiKey],
      webhook_id: [webhook],
      'webhooks:webhook_id': [webhook],
      log_id: [webhookLog],
      'oauth:id': oauthClients,
      client_id: oauthClients,
      redirect_uri: [redirectUri],
    };
  }

  it(
    'every operation of /openapi.json honours its contract',
    async () => {
      const operations = listOperations(document).filter((op) => settings.only === undefined || op.key.includes(settings.only));
      expect(operations.length, `no operation matches FUZZ_ONLY=${settings.only}`).toBeGreaterThan(0);
      const failures: Failure[] = checker.compileAll(operations).map((problem) => ({
        operation: problem.split(':')[0] as string,
        problem: `the document's schema does not compile: ${problem}`,
        wire: { method: '-', path: '-', headers: {} },
        seed: settings.seed,
        runs: 0,
      }));
      const target: FuzzTarget = {
        port,
        checker,
        requestContext: { document, poolNames: Object.keys(pools) },
        renderContext: () => ({ pools, keys: org.keys as Record<'full_access' | 'read_only', string> }),
      };

      const results: OperationResult[] = [];
      const deadline = Date.now() + settings.totalMs;
      for (const [index, operation] of operations.entries()) {
        // Time left is shared among the operations left, so a quick one leaves time to the others.
        const budget = Math.max(200, (deadline - Date.now()) / (operations.length - index));
        const result = await fuzzOperation(target, operation, settings, budget);
        results.push(result);
        failures.push(...result.failures);
        // A fuzzed DELETE (or a state change) may have removed what the pools name: fresh resources.
        if (needsReseed(operation)) pools = await seed();
      }

      failures.push(...seedFailures.filter((f) => settings.only === undefined || f.operation.includes(settings.only)));
      const runs = results.reduce((sum, r) => sum + r.runs, 0);
      const summary = `contract fuzzer: seed ${settings.seed}, ${operations.length} operations, ${runs} requests, ${failures.length} failures`;
      // The seed is printed whatever the outcome, so that any run can be replayed.
      const perOperation = results.map((r) => `  ${r.operation}: ${r.runs} runs in ${r.ms} ms, statuses ${JSON.stringify(r.statuses)}`);
      console.log(process.env.FUZZ_VERBOSE === '1' ? [summary, ...perOperation].join('\n') : summary);
      if (failures.length > 0) throw new Error(`${summary}\n\n${failures.map(formatFailure).join('\n\n')}`);
    },
    // FUZZ_SECONDS bounds the fuzzing; the re-seeding between operations and each operation's floor
    // of 200 ms come on top, and take minutes on a machine loaded by the other test files.
    settings.totalMs * 2 + 4 * SETUP_MS,
  );

  // docs/API.md, "Errors": a method a path does not accept answers 405 with `Allow`, not 404. The document
  // lists what each path accepts, so every path is probed with methods it does not list.
  it('answers 405 with Allow to a method a path does not accept', async () => {
    const problems: string[] = [];
    const allOperations = listOperations(document);
    for (const [template, item] of Object.entries(document.paths)) {
      if (settings.only !== undefined && !template.includes(settings.only)) continue;
      const accepted = new Set(Object.keys(item).map((m) => m.toUpperCase()));
      const path = template.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      // A concrete path can match another template too (`/pet/findByStatus` is also `/pet/{petId}`):
      // a method that template accepts is routed there, not refused.
      const elsewhere = (m: string) => findOperation(allOperations, m, path) !== undefined;
      for (const method of ['PATCH', 'TRACE', 'SEARCH', 'PUT', 'DELETE'].filter((m) => !accepted.has(m) && !elsewhere(m))) {
        const res = await send(port, { method, path, headers: { accept: 'application/json', authorization: `Bearer ${org.keys.full_access}` } }, settings.requestTimeoutMs);
        const allow = res.headers.allow;
        const listed = new Set(String(allow ?? '').split(',').map((m) => m.trim().toUpperCase()).filter((m) => m !== ''));
        if (res.status !== 405) problems.push(`${method} ${template}: ${res.status} ${res.text.slice(0, 120)}`);
        else if ([...accepted].some((m) => !listed.has(m))) problems.push(`${method} ${template}: 405 with Allow "${allow ?? ''}", the document lists ${[...accepted].join(', ')}`);
      }
    }
    expect(problems.length === 0 ? '' : `${problems.length} answers other than 405 with Allow:\n${problems.slice(0, 10).join('\n')}`).toBe('');
  });
});

/** The operation whose path template matches a concrete path. */
function findOperation(operations: Operation[], method: string, path: string): Operation | undefined {
  const bare = path.split('?')[0] as string;
  return operations.find((op) => op.method === method && new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`).test(bare));
}

function needsReseed(operation: Operation): boolean {
  return operation.method === 'DELETE' || /\/(deactivate|pause)$/.test(operation.path) || operation.path.startsWith('/v1/hooks');
}
