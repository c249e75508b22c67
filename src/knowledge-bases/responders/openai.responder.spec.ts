import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../config/app-config.js';
import { KnowledgeIndex } from '../knowledge-index.js';
import { AiProviderError, KnowledgeBaseNotFoundError } from '../knowledge-bases.errors.js';
import type { KnowledgeIndexes } from '../knowledge-indexes.js';
import { OpenAiResponder, PROMPT_ENTRIES } from './openai.responder.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const FALLBACK = 'Someone will get back to you.';
const FAQ = [
  { question: 'How do I reset my password?', answer: 'Use "Forgot password" on the sign-in page.' },
  { question: 'What are your opening hours?', answer: 'Monday to Friday, 9am to 6pm.' },
  { question: 'How can I get a refund?', answer: 'Refunds are issued within 14 days of receiving the return.' },
  ...Array.from({ length: 10 }, (_, i) => ({ question: `Is password rule ${i} enforced?`, answer: `Rule ${i} applies to every password.` })),
];

interface Captured {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: { model: string; temperature: number; messages: { role: string; content: string }[] };
}

/** A stand-in chat-completions server on loopback; `reply` decides each answer. */
class FakeProvider {
  server: Server;
  requests: Captured[] = [];
  reply: (res: ServerResponse) => void = (res) => this.answer(res);

  answer(res: ServerResponse) {
    this.json(res, 200, { choices: [{ message: { role: 'assistant', content: ' Reset it from the sign-in page. ' } }] });
  }

  reset() {
    this.requests = [];
    this.reply = (res) => this.answer(res);
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      req.on('end', () => {
        this.requests.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(raw) });
        this.reply(res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  json(res: ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const indexes = {
  get: async (org: string, name: string) => {
    if (org !== ORG || name !== 'faq') throw new KnowledgeBaseNotFoundError();
    return new KnowledgeIndex(FAQ);
  },
} as unknown as KnowledgeIndexes;

describe('OpenAiResponder', () => {
  const fake = new FakeProvider();
  let ai: AppConfig['ai'];

  beforeAll(async () => {
    ai = { provider: 'openai', baseUrl: await fake.start(), apiKey: 'test-key', model: 'test-model', confidenceThreshold: 0.3, fallbackResponse: FALLBACK };
  });
  afterAll(() => fake.stop());
  beforeEach(() => fake.reset());

  it('posts the question and the best entries to /chat/completions and answers the provider\'s text', async () => {
    const answer = await new OpenAiResponder(ai, indexes).answer(ORG, 'faq', 'How do I reset my password?');
    expect(answer).toEqual({ response: 'Reset it from the sign-in page.', confidence: 1 });

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer test-key');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body.model).toBe('test-model');
    expect(request.body.temperature).toBe(0);
    expect(request.body.messages).toHaveLength(2);
    const [system, user] = request.body.messages;
    expect(user).toEqual({ role: 'user', content: 'How do I reset my password?' });
    expect(system.role).toBe('system');
    expect(system.content).toContain(FAQ[0].question);
    expect(system.content).toContain(FAQ[0].answer);
    expect(system.content).toContain(FALLBACK);
    // Only the best-ranked entries: the unrelated ones and those beyond the first few stay out.
    expect(system.content).not.toContain(FAQ[1].question);
    expect(system.content.match(/Q: /g)).toHaveLength(PROMPT_ENTRIES);
  });

  it('sends no Authorization header without an API key', async () => {
    await new OpenAiResponder({ ...ai, apiKey: undefined }, indexes).answer(ORG, 'faq', 'refund');
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });

  it('answers the fallback below the threshold without calling the provider', async () => {
    expect(await new OpenAiResponder(ai, indexes).answer(ORG, 'faq', 'Is it going to rain tomorrow?')).toEqual({ response: FALLBACK, confidence: 0 });
    expect(fake.requests).toHaveLength(0);
  });

  const failure = async () => (await new OpenAiResponder(ai, indexes).answer(ORG, 'faq', 'refund').catch((e: unknown) => e)) as AiProviderError;

  it.each([500, 503, 429, 408])('throws a transient AiProviderError on HTTP %i, naming the status but not the body or the address', async (status) => {
    fake.reply = (res) => fake.json(res, status, { error: { message: 'model overloaded' } });
    const error = await failure();
    expect(error).toBeInstanceOf(AiProviderError);
    expect([error.transient, error.message]).toEqual([true, `AI provider failed (HTTP ${status})`]);
  });

  it.each([400, 401, 403, 404, 422])('throws a permanent AiProviderError (a refusal) on HTTP %i', async (status) => {
    fake.reply = (res) => fake.json(res, status, { error: { message: 'content policy: secret detail' } });
    const error = await failure();
    expect([error.transient, error.message]).toEqual([false, `AI provider refused the request (HTTP ${status})`]);
  });

  it('throws a transient AiProviderError on malformed JSON, a permanent one on an answer without content', async () => {
    fake.reply = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"choices": [');
    expect(await failure()).toMatchObject({ transient: true, message: 'AI provider answered malformed JSON' });
    fake.reply = (res) => fake.json(res, 200, { choices: [] });
    expect(await failure()).toMatchObject({ transient: false, message: 'AI provider answer has no choices[0].message.content' });
    fake.reply = (res) => fake.json(res, 200, { choices: [{ message: { content: '   ' } }] });
    expect(await failure()).toMatchObject({ transient: false });
  });

  it('throws AiProviderError when the provider does not answer in time', async () => {
    fake.reply = () => undefined; // never answers
    const error = (await new OpenAiResponder(ai, indexes, 200).answer(ORG, 'faq', 'refund').catch((e: unknown) => e)) as AiProviderError;
    expect([error.transient, error.message]).toEqual([true, 'AI provider did not answer within 0.2 s']);
  });

  it('throws AiProviderError when the provider cannot be reached', async () => {
    const closed = new FakeProvider();
    const baseUrl = await closed.start();
    await closed.stop();
    const error = (await new OpenAiResponder({ ...ai, baseUrl }, indexes).answer(ORG, 'faq', 'refund').catch((e: unknown) => e)) as AiProviderError;
    expect(error).toBeInstanceOf(AiProviderError);
    expect([error.transient, error.message]).toEqual([true, 'AI provider could not be reached']);
  });

  it('lets a missing knowledge base fail the call before any request', async () => {
    await expect(new OpenAiResponder(ai, indexes).answer(ORG, 'missing', 'refund')).rejects.toBeInstanceOf(KnowledgeBaseNotFoundError);
    expect(fake.requests).toHaveLength(0);
  });
});
