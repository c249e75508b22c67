import twilio from 'twilio';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeAiProvider, type FakeAiProvider } from '../utils/fake-ai-provider.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';
import { elements, parseXml, textOf, type XmlElement } from '../utils/xml.js';

const BASE = 'https://voice.example.com';
const AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const ACCOUNT_SID = `AC${'a1'.repeat(16)}`;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Phone calls through Twilio, driven as Twilio drives them: form-encoded requests signed with the
 * twilio package's own getExpectedTwilioSignature (and checked with its validateRequest), answered
 * with TwiML that is parsed, never string-matched.
 */
describe('voice: phone calls through Twilio', () => {
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    t = await startTestApp({ ...RATE_LIMITS_OUT_OF_REACH, REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:voice`, PUBLIC_BASE_URL: BASE, VOICE_ANSWER_TIMEOUT: '10s' });
    org = await createOrganization(t);
    other = await createOrganization(t);
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  const callSid = () => `CA${(Date.now().toString(16) + (++seq).toString(16).padStart(4, '0') + process.pid.toString(16)).padEnd(32, '0').slice(0, 32)}`;
  const caller = () => `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}${seq % 10}`;

  async function activeWorkflow(app: TestApp, o: TestOrganization, nodes: Record<string, unknown>[]): Promise<string> {
    const created = await app.http.post('/v1/workflows').set(o.auth('read_write')).send({ name: `voice-${++seq}-${Date.now()}`, channel: 'voice', configuration: { nodes } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect((await app.http.post(`/v1/workflows/${id}/activate`).set(o.auth('read_write'))).status).toBe(200);
    return id;
  }

  async function voiceAccount(app: TestApp, o: TestOrganization, settings: Record<string, unknown>): Promise<{ id: string; webhook_url: string }> {
    const res = await app.http
      .post('/v1/channel-accounts')
      .set(o.auth('read_write'))
      .send({ name: `Line ${++seq}`, channel: 'voice', provider: 'twilio', credentials: { account_sid: ACCOUNT_SID, auth_token: AUTH_TOKEN, phone_number: '+14155550199' }, settings });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  /** A request as Twilio makes it: POST, form-encoded, X-Twilio-Signature over BASE + path + query and the sorted parameters. */
  function twilioPost(app: TestApp, path: string, params: Record<string, string>, options: { token?: string; signature?: string | null; body?: Record<string, string> } = {}) {
    const url = `${BASE}${path}`;
    const signature = twilio.getExpectedTwilioSignature(options.token ?? AUTH_TOKEN, url, params);
    expect(twilio.validateRequest(options.token ?? AUTH_TOKEN, signature, url, params)).toBe(true);
    const req = app.http.post(path).set('Content-Type', 'application/x-www-form-urlencoded');
    if (options.signature !== null) req.set('X-Twilio-Signature', options.signature ?? signature);
    return req.send(new URLSearchParams(options.body ?? params).toString());
  }

  const voicePath = (accountId: string, turn?: number) => `/v1/channel-accounts/${accountId}/voice${turn === undefined ? '' : `?turn=${turn}`}`;
  const callParams = (sid: string, from: string, extra: Record<string, string> = {}) => ({
    AccountSid: ACCOUNT_SID,
    CallSid: sid,
    From: from,
    To: '+14155550199',
    Direction: 'inbound',
    CallStatus: 'in-progress',
    ...extra,
  });

  /** The TwiML answer, parsed (a malformed document fails here), as [verb, text, attributes] with the Gather's Say inside. */
  function twiml(res: { status: number; headers: Record<string, string>; text: string }): XmlElement {
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/xml/);
    expect(res.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    const root = parseXml(res.text);
    expect(root.name).toBe('Response');
    return root;
  }
  const verbs = (root: XmlElement) => elements(root).map((e) => (e.name === 'Gather' ? `Gather(${elements(e).map((s) => textOf(s)).join('|')})` : e.name === 'Say' ? `Say(${textOf(e)})` : e.name));
  const pathOf = (url: string) => {
    expect(url.startsWith(BASE)).toBe(true);
    return url.slice(BASE.length);
  };

  const executionsOf = async (workflowId: string) => (await db.query(`SELECT id, status, error FROM workflow_executions WHERE workflow_id = $1`, [workflowId])) as { id: string; status: string; error: { code: string; message: string } | null }[];
  const detail = async (workflowId: string, executionId: string, o = org) => t.http.get(`/v1/workflows/${workflowId}/executions/${executionId}`).set(o.auth('read_only'));

  const CONVERSATION = [
    { id: 'greet', type: 'message', content: 'Welcome to Acme.', next: 'ask' },
    { id: 'ask', type: 'form', fields: [{ name: 'full_name', type: 'text', required: true, label: 'What is your name?' }], next: 'bye' },
    { id: 'bye', type: 'message', content: 'Thank you, goodbye.' },
  ];

  it('answers a whole call: greeting, question, spoken answer, goodbye, hang-up; the execution shows it and the answer is stored', async () => {
    const workflowId = await activeWorkflow(t, org, CONVERSATION);
    const account = await voiceAccount(t, org, { workflow_id: workflowId, voice: 'Polly.Joanna', language: 'en-GB' });
    expect(account.webhook_url).toBe(`${BASE}/v1/channel-accounts/${account.id}/voice`);
    const sid = callSid();
    const from = caller();

    const first = twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from, { CallStatus: 'ringing' })));
    expect(verbs(first)).toEqual(['Say(Welcome to Acme.)', 'Gather(What is your name?)', 'Redirect']);
    const [say, gather, redirect] = elements(first);
    expect(say!.attributes).toEqual({ voice: 'Polly.Joanna', language: 'en-GB' });
    expect(gather!.attributes).toEqual({ input: 'speech dtmf', action: `${BASE}${voicePath(account.id, 1)}`, method: 'POST', language: 'en-GB' });
    expect(elements(gather!)[0]!.attributes).toEqual({ voice: 'Polly.Joanna', language: 'en-GB' });
    // On silence Twilio goes past the Gather: to the same turn, which asks again.
    expect(textOf(redirect!)).toBe(gather!.attributes.action);

    const [execution] = await executionsOf(workflowId);
    expect(execution).toMatchObject({ status: 'running' });

    const second = twiml(await twilioPost(t, pathOf(gather!.attributes.action!), callParams(sid, from, { SpeechResult: 'Ada Lovelace', Confidence: '0.93' })));
    expect(verbs(second)).toEqual(['Say(Thank you, goodbye.)', 'Hangup']);

    const res = await detail(workflowId, execution!.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'success', channel: 'voice', customer_id: from });
    expect(res.body.data.steps.map((s: { node_id: string; status: string }) => [s.node_id, s.status])).toEqual([
      ['greet', 'completed'],
      ['ask', 'completed'],
      ['bye', 'completed'],
    ]);
    expect(res.body.data.steps[1].output).toEqual({ answers: { full_name: 'Ada Lovelace' } });
    const customer = await t.http.get(`/v1/customers/${encodeURIComponent(from)}`).set(org.auth('read_only'));
    expect(customer.body.data.attributes).toMatchObject({ full_name: 'Ada Lovelace' });
    // The call's messages are spoken, never queued for a provider's sender.
    expect(await db.query(`SELECT 1 FROM message_deliveries WHERE execution_id = $1`, [execution!.id])).toEqual([]);
    const [{ channel_account_id: accountOfExecution }] = await db.query(`SELECT channel_account_id FROM workflow_executions WHERE id = $1`, [execution!.id]);
    expect(accountOfExecution).toBe(account.id);

    // The status callback at the end changes nothing and gets an empty Response.
    const status = twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from, { CallStatus: 'completed', CallDuration: '12' })));
    expect(elements(status)).toEqual([]);
    expect(await executionsOf(workflowId)).toEqual([expect.objectContaining({ status: 'success', error: null })]);

    // Another organization's credential sees nothing of the call's execution.
    const foreign = await detail(workflowId, execution!.id, other);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain('Ada Lovelace');
    expect((await t.http.get(`/v1/customers/${encodeURIComponent(from)}`).set(other.auth('read_only'))).status).toBe(404);
  });

  it('takes a keyed answer (Digits), asks again on silence, and re-asks an invalid answer inside a Gather', async () => {
    const workflowId = await activeWorkflow(t, org, [
      { id: 'rate', type: 'form', fields: [{ name: 'score', type: 'rating', required: true, label: 'Press a key from 1 to 5.' }], next: 'bye' },
      { id: 'bye', type: 'message', content: 'Noted.' },
    ]);
    const account = await voiceAccount(t, org, { workflow_id: workflowId });
    const sid = callSid();
    const from = caller();
    const first = twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from, { CallStatus: 'ringing' })));
    expect(verbs(first)).toEqual(['Gather(Press a key from 1 to 5.)', 'Redirect']);
    // No voice or language set: Twilio's defaults, no attributes.
    expect(elements(elements(first)[0]!)[0]!.attributes).toEqual({});

    // The Gather heard nothing: Twilio follows the Redirect, without an answer.
    const silence = twiml(await twilioPost(t, voicePath(account.id, 1), callParams(sid, from)));
    expect(verbs(silence)).toEqual(['Gather(Press a key from 1 to 5.)', 'Redirect']);

    const invalid = twiml(await twilioPost(t, voicePath(account.id, 1), callParams(sid, from, { Digits: '9' })));
    expect(verbs(invalid)).toEqual([expect.stringMatching(/^Gather\(Sorry, that doesn't look right: .*from 1 to 5.*\)$/), 'Redirect']);
    expect(elements(invalid)[0]!.attributes.action).toBe(`${BASE}${voicePath(account.id, 2)}`);

    const done = twiml(await twilioPost(t, voicePath(account.id, 2), callParams(sid, from, { Digits: '4' })));
    expect(verbs(done)).toEqual(['Say(Noted.)', 'Hangup']);
    const [execution] = await executionsOf(workflowId);
    expect(execution!.status).toBe('success');
    expect((await detail(workflowId, execution!.id)).body.data.steps[0].output).toEqual({ answers: { score: 4 } });
  });

  it('answers a repeated request (same CallSid and turn) identically, running nothing twice', async () => {
    const workflowId = await activeWorkflow(t, org, CONVERSATION);
    const account = await voiceAccount(t, org, { workflow_id: workflowId });
    const sid = callSid();
    const from = caller();
    const params = callParams(sid, from, { CallStatus: 'ringing' });
    const [a, b] = await Promise.all([twilioPost(t, voicePath(account.id), params), twilioPost(t, voicePath(account.id), params)]);
    const c = await twilioPost(t, voicePath(account.id), params);
    // A concurrent twin may have been told to hold while the other started the call; once answered, every repeat is the same answer.
    for (const res of [a, b]) twiml(res);
    expect(c.text).toBe([a, b].find((r) => r.text.includes('<Gather'))!.text);
    expect(await executionsOf(workflowId)).toHaveLength(1);

    // The answer posted twice at once (as two API processes would get it), then once more later.
    const answer = callParams(sid, from, { SpeechResult: 'Grace Hopper' });
    const [first, twin] = await Promise.all([twilioPost(t, voicePath(account.id, 1), answer), twilioPost(t, voicePath(account.id, 1), answer)]);
    const again = await twilioPost(t, voicePath(account.id, 1), answer);
    expect(verbs(twiml(first))).toEqual(['Say(Thank you, goodbye.)', 'Hangup']);
    expect(twin.text).toBe(first.text);
    expect(again.text).toBe(first.text);
    const [execution] = await executionsOf(workflowId);
    expect(execution!.status).toBe('success');
    const inbound = await db.query(`SELECT content FROM messages WHERE execution_id = $1 AND direction = 'inbound'`, [execution!.id]);
    expect(inbound).toEqual([{ content: 'Grace Hopper' }]);
    const steps = (await detail(workflowId, execution!.id)).body.data.steps;
    expect(steps).toHaveLength(3);
  });

  it('keeps the document well formed and the text intact whatever the workflow says', async () => {
    const hostile = `Tom & Jerry's <b>"deals"</b> ]]> </Say><Hangup/> &amp;`;
    const workflowId = await activeWorkflow(t, org, [
      { id: 'greet', type: 'message', content: hostile, next: 'ask' },
      { id: 'ask', type: 'form', fields: [{ name: 'q', type: 'text', required: true, label: `Yes <or> "no" & 'maybe'?` }] },
    ]);
    const account = await voiceAccount(t, org, { workflow_id: workflowId });
    const root = twiml(await twilioPost(t, voicePath(account.id), callParams(callSid(), caller())));
    expect(verbs(root)).toEqual([`Say(${hostile})`, `Gather(Yes <or> "no" & 'maybe'?)`, 'Redirect']);
  });

  it('refuses a missing, invalid or tampered signature with 403, starting and storing nothing', async () => {
    const workflowId = await activeWorkflow(t, org, CONVERSATION);
    const account = await voiceAccount(t, org, { workflow_id: workflowId });
    const sid = callSid();
    const params = callParams(sid, caller());
    const refused = [
      await twilioPost(t, voicePath(account.id), params, { signature: null }),
      await twilioPost(t, voicePath(account.id), params, { token: 'f'.repeat(32) }),
      await twilioPost(t, voicePath(account.id), params, { signature: 'bm90IGEgc2lnbmF0dXJlIGF0IGFsbA==' }),
      // Signed for one caller, posted with another.
      await twilioPost(t, voicePath(account.id), params, { body: { ...params, From: '+19995550000' } }),
    ];
    // Signed for turn 0's URL, posted to turn 1's.
    const url = `${BASE}${voicePath(account.id)}`;
    refused.push(
      await t.http
        .post(voicePath(account.id, 1))
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('X-Twilio-Signature', twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params))
        .send(new URLSearchParams(params).toString()),
    );
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('INVALID_SIGNATURE');
    }
    expect(await executionsOf(workflowId)).toEqual([]);
    expect(await db.query(`SELECT 1 FROM voice_calls WHERE call_sid = $1`, [sid])).toEqual([]);
    // The same request, signed as Twilio signs it, is answered.
    expect(verbs(twiml(await twilioPost(t, voicePath(account.id), params)))).toContain('Gather(What is your name?)');
    expect(await executionsOf(workflowId)).toHaveLength(1);
  });

  it('answers 404 for an unknown account, and for an account that is not a phone line', async () => {
    const unknown = await twilioPost(t, voicePath(UNKNOWN_ID), callParams(callSid(), caller()));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('CHANNEL_ACCOUNT_NOT_FOUND');
    const whatsapp = await t.http
      .post('/v1/channel-accounts')
      .set(org.auth('read_write'))
      .send({ name: 'WA', channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: '123456', access_token: 'EAAGtest-access-token-0123456789', app_secret: AUTH_TOKEN } });
    expect(whatsapp.status).toBe(201);
    expect((await twilioPost(t, voicePath(whatsapp.body.data.id), callParams(callSid(), caller()))).status).toBe(404);
  });

  it('apologises and hangs up when the account has no workflow (never a 5xx)', async () => {
    const account = await voiceAccount(t, org, {});
    const sid = callSid();
    const root = twiml(await twilioPost(t, voicePath(account.id), callParams(sid, caller())));
    expect(verbs(root)).toEqual([expect.stringMatching(/^Say\(Sorry.*\)$/), 'Hangup']);
    const [call] = await db.query(`SELECT execution_id FROM voice_calls WHERE call_sid = $1`, [sid]);
    expect(call.execution_id).toBeNull();
  });

  it('apologises and hangs up, at once, when the account\'s workflow is not active', async () => {
    const workflowId = await activeWorkflow(t, org, CONVERSATION);
    expect((await t.http.post(`/v1/workflows/${workflowId}/deactivate`).set(org.auth('read_write'))).status).toBe(200);
    const account = await voiceAccount(t, org, { workflow_id: workflowId });
    const sid = callSid();
    const from = caller();
    const started = Date.now();
    const root = twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from)));
    expect(verbs(root)).toEqual([expect.stringMatching(/^Say\(Sorry.*\)$/), 'Hangup']);
    // Not after VOICE_ANSWER_TIMEOUT: nothing was started, so nothing is waited for.
    expect(Date.now() - started).toBeLessThan(5_000);
    const [call] = await db.query(`SELECT execution_id FROM voice_calls WHERE call_sid = $1`, [sid]);
    expect(call.execution_id).toBeNull();
    expect(await executionsOf(workflowId)).toEqual([]);
    // Asked again (Twilio repeating the request): the same answer, kept.
    expect(verbs(twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from))))).toEqual(verbs(root));
  });

  it('ends a waiting execution with CALL_ENDED when the caller hangs up (status callback), once', async () => {
    const workflowId = await activeWorkflow(t, org, CONVERSATION);
    const account = await voiceAccount(t, org, { workflow_id: workflowId });
    const sid = callSid();
    const from = caller();
    expect(verbs(twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from))))).toEqual(['Say(Welcome to Acme.)', 'Gather(What is your name?)', 'Redirect']);
    const status = twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from, { CallStatus: 'completed', CallDuration: '7' })));
    expect(elements(status)).toEqual([]);
    const [execution] = await executionsOf(workflowId);
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'CALL_ENDED', node_id: 'ask' } });
    expect(execution!.error!.message).toContain('completed');
    const res = await detail(workflowId, execution!.id);
    expect(res.body.data).toMatchObject({ status: 'failed', error: { code: 'CALL_ENDED', node_id: 'ask' } });
    const [{ completed_at: endedAt }] = await db.query(`SELECT completed_at FROM workflow_executions WHERE id = $1`, [execution!.id]);
    // A second callback (another terminal status) changes nothing.
    twiml(await twilioPost(t, voicePath(account.id), callParams(sid, from, { CallStatus: 'canceled' })));
    const [after] = await db.query(`SELECT status, completed_at, error FROM workflow_executions WHERE id = $1`, [execution!.id]);
    expect(after).toMatchObject({ status: 'failed', completed_at: endedAt, error: { code: 'CALL_ENDED' } });
    const [call] = await db.query(`SELECT end_status FROM voice_calls WHERE call_sid = $1`, [sid]);
    expect(call.end_status).toBe('completed');
  });

  it('validates settings.voice and settings.language, for voice accounts only', async () => {
    const bad = await t.http
      .post('/v1/channel-accounts')
      .set(org.auth('read_write'))
      .send({ name: 'Bad', channel: 'voice', provider: 'twilio', credentials: { account_sid: ACCOUNT_SID, auth_token: AUTH_TOKEN, phone_number: '+14155550199' }, settings: { language: 'english please' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_CHANNEL_ACCOUNT', field: 'settings.language' });
    const badVoice = await t.http
      .post('/v1/channel-accounts')
      .set(org.auth('read_write'))
      .send({ name: 'Bad', channel: 'voice', provider: 'twilio', credentials: { account_sid: ACCOUNT_SID, auth_token: AUTH_TOKEN, phone_number: '+14155550199' }, settings: { voice: '<alice>' } });
    expect(badVoice.body.error).toMatchObject({ code: 'INVALID_CHANNEL_ACCOUNT', field: 'settings.voice' });
    const whatsapp = await t.http
      .post('/v1/channel-accounts')
      .set(org.auth('read_write'))
      .send({ name: 'WA', channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: '654321', access_token: 'EAAGtest-access-token-0123456789', app_secret: AUTH_TOKEN }, settings: { voice: 'alice' } });
    expect(whatsapp.body.error).toMatchObject({ code: 'INVALID_CHANNEL_ACCOUNT', field: 'settings.voice' });
    const good = await voiceAccount(t, org, { voice: 'alice', language: 'fr-FR' });
    const got = await t.http.get(`/v1/channel-accounts/${good.id}`).set(org.auth('read_only'));
    expect(got.body.data.settings).toEqual({ voice: 'alice', language: 'fr-FR' });
  });

  describe('runs in a worker process of their own (as in production)', () => {
    let api: TestApp;
    let worker: WorkerProcess;
    let apiOrg: TestOrganization;

    beforeAll(async () => {
      api = await startTestApp({ ...RATE_LIMITS_OUT_OF_REACH, APP_ROLE: 'api', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:voice-api`, PUBLIC_BASE_URL: BASE, VOICE_ANSWER_TIMEOUT: '10s' });
      worker = new WorkerProcess(api.config, { PUBLIC_BASE_URL: BASE, WORKER_CONCURRENCY: '4' });
      worker.start();
      apiOrg = await createOrganization(api);
    });
    afterAll(async () => {
      await worker?.stop();
      await api?.close();
    });

    it('answers each turn once the worker committed the run, woken across processes', async () => {
      const workflowId = await activeWorkflow(api, apiOrg, CONVERSATION);
      const account = await voiceAccount(api, apiOrg, { workflow_id: workflowId });
      const sid = callSid();
      const from = caller();
      // The worker process may still be starting: the answer waits for its first run (VOICE_ANSWER_TIMEOUT 10 s).
      const first = twiml(await twilioPost(api, voicePath(account.id), callParams(sid, from, { CallStatus: 'ringing' })));
      expect(verbs(first), worker.output).toEqual(['Say(Welcome to Acme.)', 'Gather(What is your name?)', 'Redirect']);
      const started = Date.now();
      const second = twiml(await twilioPost(api, voicePath(account.id, 1), callParams(sid, from, { SpeechResult: 'Katherine Johnson' })));
      expect(verbs(second)).toEqual(['Say(Thank you, goodbye.)', 'Hangup']);
      // Woken by the worker's announcement, not by the 10 s timeout.
      expect(Date.now() - started).toBeLessThan(5000);
      const [execution] = await api.app.get(DataSource).query(`SELECT status FROM workflow_executions WHERE workflow_id = $1`, [workflowId]);
      expect(execution.status).toBe('success');
    });
  });

  describe('a run slower than VOICE_ANSWER_TIMEOUT', () => {
    let slow: TestApp;
    let ai: FakeAiProvider;
    let slowOrg: TestOrganization;

    beforeAll(async () => {
      ai = await startFakeAiProvider({ content: 'We open at 9 & close at 5.' });
      slow = await startTestApp({
        ...RATE_LIMITS_OUT_OF_REACH,
        REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:voice-slow`,
        PUBLIC_BASE_URL: BASE,
        VOICE_ANSWER_TIMEOUT: '300ms',
        AI_PROVIDER: 'openai',
        AI_BASE_URL: ai.url,
        AI_API_KEY: 'test-key',
        RATE_LIMIT_CHANNEL_PER_MINUTE: '8',
        WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE: '3',
      });
      slowOrg = await createOrganization(slow);
      await slow.http.put('/v1/knowledge-bases/hours').set(slowOrg.auth('read_write')).send({ entries: [{ question: 'When do you open?', answer: 'At 9.' }] }).expect(201);
    });
    afterAll(async () => {
      await slow?.close();
      await ai?.close();
    });

    it('counts signed requests in the account\'s channel limit and failed signatures per source address, like the Meta webhook', async () => {
      const account = await voiceAccount(slow, slowOrg, {});
      const sid = callSid();
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) {
        const res = await twilioPost(slow, voicePath(account.id), callParams(sid, caller(), { CallStatus: 'completed' }));
        statuses.push(res.status);
        if (i === 0) expect(res.headers['x-ratelimit-limit']).toBe('8');
        if (i === 8) expect(res.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
      const failures: number[] = [];
      for (let i = 0; i < 4; i++) failures.push((await twilioPost(slow, voicePath(account.id), callParams(callSid(), caller()), { token: 'e'.repeat(32) })).status);
      expect(failures).toEqual([403, 403, 403, 429]);
    });

    it('tells the caller to hold and redirects to the same URL, which then answers with what the run produced', async () => {
      const workflowId = await activeWorkflow(slow, slowOrg, [
        { id: 'greet', type: 'message', content: 'Hello.', next: 'question' },
        { id: 'question', type: 'form', fields: [{ name: 'question', type: 'text', required: true, label: 'What would you like to know?' }], next: 'answer' },
        { id: 'answer', type: 'ai_response', knowledge_base: 'hours', next: 'ask' },
        { id: 'ask', type: 'form', fields: [{ name: 'more', type: 'boolean', required: true, label: 'Anything else?' }] },
      ]);
      const account = await voiceAccount(slow, slowOrg, { workflow_id: workflowId });
      const sid = callSid();
      const from = caller();
      const first = twiml(await twilioPost(slow, voicePath(account.id), callParams(sid, from, { CallStatus: 'ringing' })));
      expect(verbs(first)).toEqual(['Say(Hello.)', 'Gather(What would you like to know?)', 'Redirect']);

      // The provider holds its answer: the run cannot reach the next question within 300 ms.
      let release!: () => void;
      ai.hold = new Promise<void>((resolve) => (release = resolve));
      const started = Date.now();
      const held = twiml(await twilioPost(slow, voicePath(account.id, 1), callParams(sid, from, { SpeechResult: 'When do you open?' })));
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(verbs(held)).toEqual([expect.stringMatching(/^Say\(.+\)$/), 'Redirect']);
      const redirect = elements(held)[1]!;
      expect(textOf(redirect)).toBe(`${BASE}${voicePath(account.id, 1)}`);
      expect(redirect.attributes.method).toBe('POST');
      // Twilio follows the Redirect (without the answer): still running, so it waits again and holds again.
      await waitFor('the AI request', async () => ai.requests.length > 0);
      expect(verbs(twiml(await twilioPost(slow, pathOf(textOf(redirect)), callParams(sid, from))))).toEqual([expect.stringMatching(/^Say/), 'Redirect']);

      ai.hold = undefined;
      release();
      const answered = twiml(await twilioPost(slow, pathOf(textOf(redirect)), callParams(sid, from)));
      expect(verbs(answered)).toEqual(['Say(We open at 9 & close at 5.)', 'Gather(Anything else?)', 'Redirect']);
      const db2 = slow.app.get(DataSource);
      const executions = await db2.query(`SELECT id FROM workflow_executions WHERE workflow_id = $1`, [workflowId]);
      expect(executions).toHaveLength(1);
      expect(await db2.query(`SELECT content FROM messages WHERE execution_id = $1 AND direction = 'inbound'`, [executions[0].id])).toEqual([{ content: 'When do you open?' }]);
      // The redirected requests did not touch the execution while it ran: the run committed once, its AI node asked once.
      expect(ai.requests).toHaveLength(1);
    });
  });
});
