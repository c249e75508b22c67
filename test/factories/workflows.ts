import type { TestApp, TestOrganization } from '../utils/test-app.js';

let counter = 0;

/** A form node asking an optional `rating` (1–5) and `nps` (0–10): what satisfaction and NPS are computed from (docs/DECISIONS.md, "Analytics", "Definitions"). */
export const SURVEY_FORM = {
  id: 'survey',
  type: 'form',
  fields: [
    { name: 'score', type: 'rating', required: false, label: 'Rate us 1-5' },
    { name: 'recommend', type: 'nps', required: false, label: 'Would you recommend us (0-10)?' },
  ],
};

export function workflowBody(overrides: Record<string, unknown> = {}) {
  counter += 1;
  return {
    name: `Workflow ${counter}-${Date.now()}`,
    description: 'Answers customer questions',
    channel: 'whatsapp',
    configuration: {
      trigger: { type: 'message', keywords: ['help'] },
      nodes: [
        { id: 'welcome', type: 'message', content: 'Hello! How can we help?', next: 'answer' },
        { id: 'answer', type: 'ai_response', knowledge_base: 'faq', next: 'contact' },
        { id: 'contact', type: 'form', fields: [{ name: 'email', type: 'email', required: true, label: 'Your email' }] },
      ],
    },
    ...overrides,
  };
}

/** Creates a workflow through the API and returns its summary. */
export async function createWorkflow(testApp: TestApp, org: TestOrganization, overrides: Record<string, unknown> = {}) {
  const res = await testApp.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody(overrides));
  if (res.status !== 201) throw new Error(`createWorkflow: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; name: string; status: string };
}

/** Creates a workflow of `nodes` through the API and activates it; returns its id. */
export async function createActiveWorkflow(testApp: TestApp, org: TestOrganization, nodes: Record<string, unknown>[], channel = 'whatsapp'): Promise<string> {
  const { id } = await createWorkflow(testApp, org, { channel, configuration: { nodes } });
  const res = await testApp.http.post(`/v1/workflows/${id}/activate`).set(org.auth('read_write'));
  if (res.status !== 200) throw new Error(`activate: ${res.status} ${JSON.stringify(res.body)}`);
  return id;
}
