import type { TestApp, TestOrganization } from '../utils/test-app.js';

let counter = 0;

/** Creates a trigger through the API and returns it. */
export async function createTrigger(
  t: TestApp,
  org: TestOrganization,
  workflowId: string,
  type: 'message' | 'schedule' | 'webhook' | 'api',
  configuration: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  counter += 1;
  const res = await t.http
    .post('/v1/triggers')
    .set(org.auth('read_write'))
    .send({ name: `Trigger ${counter}-${Date.now()}`, type, workflow_id: workflowId, channel: 'whatsapp', configuration, ...extra });
  if (res.status !== 201) throw new Error(`createTrigger: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; status: string; configuration: Record<string, unknown> };
}
