// What the executions-style scenarios share (executions, executions-webhooks, channels): the app booted as an api
// process and a worker process, the two-message keyword workflow they drive, and small waiting helpers.
export const CHANNEL = 'whatsapp';
/** The inbound text: matches the trigger's keyword 'order'. */
export const MESSAGE = 'order status please';
/** The workflow's two message nodes' texts, in the order it sends them. */
export const REPLIES = ['Thanks for your message!', 'Your order is on its way.'];
/** Bull concurrency of the worker process. */
export const WORKER_CONCURRENCY = 10;

export async function expectCreated(res, what) {
  if (res.status !== 200 && res.status !== 201) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
  return res.body.data;
}

export async function waitUntil(what, timeoutMs, check) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Running executions of the scenario's database (`db`: a pg client). */
export const backlog = async (db) => (await db.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE status = 'running'`)).rows[0].n;

/**
 * The app as in production: APP_ROLE=api for HTTP, then (once the api's start-up has applied the migrations)
 * APP_ROLE=worker with WORKER_CONCURRENCY for the queues. `env` goes to both.
 */
export async function startApiAndWorker(ctx, env = {}) {
  const api = await ctx.startApp({ role: 'api', env });
  const worker = await ctx.startApp({ role: 'worker', env: { ...env, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) } });
  return { api, worker };
}

/** The scenario's workflow (two message nodes, REPLIES) and its active message trigger on CHANNEL for 'order'. */
export async function createBenchWorkflow(ctx, apiUrl) {
  const workflow = await expectCreated(
    await ctx.api(apiUrl, 'POST', '/v1/workflows', {
      name: 'bench executions',
      channel: CHANNEL,
      configuration: {
        nodes: [
          { id: 'greet', type: 'message', content: REPLIES[0], next: 'status' },
          { id: 'status', type: 'message', content: REPLIES[1] },
        ],
      },
    }),
    'POST /v1/workflows',
  );
  await expectCreated(await ctx.api(apiUrl, 'POST', `/v1/workflows/${workflow.id}/activate`), 'activate');
  const trigger = await expectCreated(
    await ctx.api(apiUrl, 'POST', '/v1/triggers', {
      name: 'bench order messages',
      type: 'message',
      workflow_id: workflow.id,
      channel: CHANNEL,
      configuration: { keywords: ['order'] },
    }),
    'POST /v1/triggers',
  );
  if (trigger.status !== 'active') await expectCreated(await ctx.api(apiUrl, 'POST', `/v1/triggers/${trigger.id}/activate`), 'trigger activate');
  return { workflow, trigger };
}
