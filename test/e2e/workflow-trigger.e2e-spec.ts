import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

const NODES = [{ id: 'hello', type: 'message', content: 'Hello from the workflow' }];

/** Defect 6: a workflow's configuration.trigger ({type: "message", keywords}) starts it while it is active. */
describe("a workflow's configuration.trigger", () => {
  let t: TestApp;
  let org: TestOrganization;
  let seq = 0;

  beforeAll(async () => {
    t = await startTestApp({ ...RATE_LIMITS_OUT_OF_REACH, REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:workflow-trigger` });
    org = await createOrganization(t);
  });
  afterAll(() => t?.close());

  /** A keyword no other test of this organization uses. */
  const keyword = () => `kw${++seq}x${Date.now().toString(36)}`;

  const workflow = (keywords: string[], overrides: Record<string, unknown> = {}) =>
    createWorkflow(t, org, { configuration: { trigger: { type: 'message', keywords }, nodes: NODES }, ...overrides });
  const act = async (id: string, action: 'activate' | 'deactivate') =>
    expect((await t.http.post(`/v1/workflows/${id}/${action}`).set(org.auth('read_write'))).status).toBe(200);

  /** The workflows that the message started (each firing's execution, read back by its workflow). */
  async function started(text: string, channel = 'whatsapp'): Promise<string[]> {
    const res = await t.http
      .post('/v1/messages')
      .set(org.auth('read_write'))
      .send({ channel, customer_id: `+1555${Date.now() % 1_000_000}${seq}`, message: text });
    expect(res.status).toBe(202);
    const workflows: string[] = [];
    for (const fired of res.body.data.executions as { trigger_id: string; trigger_execution_id: string; workflow_execution_id: string; status: string }[]) {
      expect(fired.status).toBe('running');
      const triggerExecution = await t.http.get(`/v1/triggers/${fired.trigger_id}/executions/${fired.trigger_execution_id}`).set(org.auth('read_only'));
      expect(triggerExecution.status).toBe(200);
      workflows.push(triggerExecution.body.data.workflow_id);
      const execution = await t.http.get(`/v1/workflows/${triggerExecution.body.data.workflow_id}/executions/${fired.workflow_execution_id}`).set(org.auth('read_only'));
      expect(execution.status).toBe(200);
    }
    return workflows;
  }

  it('starts the active workflow when an inbound message matches its keywords, with the message triggers\' rules', async () => {
    const word = keyword();
    const wf = await workflow([word, 'second phrase']);
    await act(wf.id, 'activate');

    expect(await started(`Hi, ${word.toUpperCase()} please`)).toEqual([wf.id]);
    expect(await started('this is the second phrase!')).toEqual([wf.id]);
    // Whole words only, and the workflow's channel.
    expect(await started(`${word}ing`)).toEqual([]);
    expect(await started(word, 'instagram')).toEqual([]);
  });

  it('starts nothing while the workflow is a draft or inactive, and again once reactivated', async () => {
    const word = keyword();
    const wf = await workflow([word]);
    expect(await started(word)).toEqual([]);

    await act(wf.id, 'activate');
    await act(wf.id, 'deactivate');
    expect(await started(word)).toEqual([]);

    await act(wf.id, 'activate');
    expect(await started(word)).toEqual([wf.id]);
  });

  it('follows an update of the keywords, and stops when the trigger is removed from the configuration', async () => {
    const [before, after] = [keyword(), keyword()];
    const wf = await workflow([before]);
    await act(wf.id, 'activate');
    expect(await started(before)).toEqual([wf.id]);

    const updated = await t.http
      .put(`/v1/workflows/${wf.id}`)
      .set(org.auth('read_write'))
      .send({ configuration: { trigger: { type: 'message', keywords: [after] }, nodes: NODES } });
    expect(updated.status).toBe(200);
    expect(await started(before)).toEqual([]);
    expect(await started(after)).toEqual([wf.id]);

    await t.http.put(`/v1/workflows/${wf.id}`).set(org.auth('read_write')).send({ configuration: { nodes: NODES } }).expect(200);
    expect(await started(after)).toEqual([]);
  });

  it('stops when the workflow is deleted', async () => {
    const word = keyword();
    const wf = await workflow([word]);
    await act(wf.id, 'activate');
    expect(await started(word)).toEqual([wf.id]);

    expect((await t.http.delete(`/v1/workflows/${wf.id}`).set(org.auth('full_access'))).status).toBe(200);
    expect(await started(word)).toEqual([]);
  });

  it('is a managed message trigger: listed with the workflow\'s triggers, changed only through the workflow (409)', async () => {
    const word = keyword();
    const wf = await workflow([word]);
    const listed = async () => (await t.http.get('/v1/triggers').query({ workflow_id: wf.id }).set(org.auth('read_only'))).body.data;
    expect(await listed()).toEqual([]);

    await act(wf.id, 'activate');
    const [managed] = await listed();
    expect(managed).toMatchObject({ type: 'message', status: 'active', workflow_id: wf.id, channel: 'whatsapp' });
    expect(managed.configuration).toEqual({ keywords: [word], case_sensitive: false, exact_match: false, language: null, channel: null });

    for (const [method, path, body] of [
      ['put', `/v1/triggers/${managed.id}`, { name: 'mine now' }],
      ['post', `/v1/triggers/${managed.id}/pause`, undefined],
      ['post', `/v1/triggers/${managed.id}/deactivate`, undefined],
      ['delete', `/v1/triggers/${managed.id}`, undefined],
    ] as const) {
      const res = await t.http[method](path).set(org.auth('full_access')).send(body);
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.body.error.code).toBe('INVALID_STATE_TRANSITION');
    }

    await act(wf.id, 'deactivate');
    expect((await listed()).map((x: { status: string }) => x.status)).toEqual(['inactive']);
  });

  it('leaves configuration.trigger of other types, or without keywords, inert', async () => {
    const word = keyword();
    const schedule = await workflow([word], { configuration: { trigger: { type: 'schedule', keywords: [word] }, nodes: NODES } });
    const empty = await workflow([]);
    await act(schedule.id, 'activate');
    await act(empty.id, 'activate');
    expect(await started(word)).toEqual([]);
    expect((await t.http.get('/v1/triggers').query({ workflow_id: schedule.id }).set(org.auth('read_only'))).body.data).toEqual([]);
  });
});
