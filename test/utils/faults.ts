import type { DataSource } from 'typeorm';
import { createTrigger } from '../factories/triggers.js';
import { startFakeAiProvider, type FakeAiProvider } from './fake-ai-provider.js';
import type { TestApp, TestOrganization } from './test-app.js';

/**
 * Shared pieces of the fault tests (test/e2e/faults-*.e2e-spec.ts): a workflow that sends
 * messages around an AI answer, a fake AI provider on loopback, a steady stream of inbound
 * messages, and the check that every accepted execution finished with each message sent once.
 */

/** The messages each execution of the fault workflow sends, in order (node id, content). */
export const FAULT_SENDS = [
  ['hello', 'Hello, one moment please.'],
  ['answer', 'Our store opens at 9am.'],
  ['bye', 'Anything else?'],
] as const;

/** The fake AI provider of the fault tests, answering the fault workflow's AI answer after `delayMs` (so that runs are in flight when a fault strikes). */
export function startAiProvider(delayMs: number): Promise<FakeAiProvider> {
  return startFakeAiProvider({ content: FAULT_SENDS[1][1], delayMs });
}

/** The worker environment that makes ai_response ask the fake provider. */
export function aiEnv(url: string): Record<string, string> {
  return { AI_PROVIDER: 'openai', AI_BASE_URL: url, AI_API_KEY: 'test' };
}

/** An active workflow (message, ai_response, message) and a message trigger on `keyword`; returns the workflow id. */
export async function createFaultWorkflow(t: TestApp, org: TestOrganization, keyword: string): Promise<string> {
  const kb = await t.http.put('/v1/knowledge-bases/store').set(org.auth('read_write')).send({ entries: [{ question: 'When do you open?', answer: 'At 9am.' }] });
  if (kb.status !== 200 && kb.status !== 201) throw new Error(`knowledge base: ${kb.status} ${JSON.stringify(kb.body)}`);
  const created = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
    name: `faults-${keyword}-${Date.now()}`,
    channel: 'whatsapp',
    configuration: {
      nodes: [
        { id: 'hello', type: 'message', content: FAULT_SENDS[0][1], next: 'answer' },
        { id: 'answer', type: 'ai_response', knowledge_base: 'store', next: 'bye' },
        { id: 'bye', type: 'message', content: FAULT_SENDS[2][1] },
      ],
    },
  });
  if (created.status !== 201) throw new Error(`workflow: ${created.status} ${JSON.stringify(created.body)}`);
  const workflowId = created.body.data.id as string;
  const activated = await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write'));
  if (activated.status !== 200) throw new Error(`activate: ${activated.status}`);
  await createTrigger(t, org, workflowId, 'message', { keywords: [keyword] });
  return workflowId;
}

export interface Answer {
  status: number;
  /** The execution started, for a 202 that started one. */
  executionId?: string;
  code?: string;
  retryAfter?: string | null;
  rateLimited: boolean;
  body: string;
  /** When the request was sent and how long its answer took (ms). */
  at?: number;
  ms?: number;
}

/** One inbound message, as a client sees the answer. */
export type Send = (i: number) => Promise<Answer>;

/**
 * Sends messages with `concurrency` clients until stopped; each answer is kept. A request that
 * gets no answer at all (a connection refused or cut) is recorded with status 0.
 */
export function keepSending(send: Send, concurrency: number): { answers: Answer[]; stop(): Promise<Answer[]> } {
  const answers: Answer[] = [];
  let running = true;
  let next = 0;
  const client = async () => {
    while (running) {
      const i = next++;
      try {
        answers.push(await send(i));
      } catch (error) {
        answers.push({ status: 0, rateLimited: false, body: (error as Error).message });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const clients = Array.from({ length: concurrency }, () => client());
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(clients);
      return answers;
    },
  };
}

/** Reads a POST /v1/messages answer. */
export function toAnswer(status: number, headers: { get(name: string): string | null }, text: string): Answer {
  let body: { data?: { executions?: { workflow_execution_id?: string | null }[] }; error?: { code?: string } } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return {
    status,
    executionId: body.data?.executions?.[0]?.workflow_execution_id ?? undefined,
    code: body.error?.code,
    retryAfter: headers.get('retry-after'),
    rateLimited: headers.get('x-ratelimit-limit') !== null,
    body: text.slice(0, 300),
  };
}

/** Per execution: status, and how many times each node sent (messages and message.sent events) and ran (steps). */
export async function executionOutcomes(db: DataSource, ids: string[]) {
  return (await db.query(
    // The events are counted in one pass over outbox_events (no index on the execution in their data):
    // a count per execution made one scan of the shared test database's whole outbox per execution.
    `WITH events AS (
       SELECT o.data->>'execution_id' AS execution_id, count(*)::int AS n FROM outbox_events o
        WHERE o.type = 'message.sent' AND o.data->>'execution_id' = ANY ($1::text[]) GROUP BY 1
     )
     SELECT e.id, e.status,
            (SELECT json_agg(json_build_array(m.node_id, m.content) ORDER BY m.created_at, m.id) FROM messages m
              WHERE m.execution_id = e.id AND m.direction = 'outbound') AS sent,
            COALESCE(ev.n, 0) AS sent_events,
            (SELECT count(*)::int FROM execution_steps s WHERE s.execution_id = e.id) AS steps
       FROM workflow_executions e LEFT JOIN events ev ON ev.execution_id = e.id::text
      WHERE e.id = ANY ($1::uuid[])`,
    [ids],
  )) as { id: string; status: string; sent: [string, string][] | null; sent_events: number; steps: number }[];
}

/** Statuses of the executions, counted. */
export async function statusCounts(db: DataSource, ids: string[]): Promise<Record<string, number>> {
  const rows: { status: string; n: number }[] = await db.query(
    'SELECT status, count(*)::int AS n FROM workflow_executions WHERE id = ANY ($1::uuid[]) GROUP BY status',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
