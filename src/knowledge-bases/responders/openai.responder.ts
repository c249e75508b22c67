import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import type { KnowledgeEntry } from '../entities/knowledge-base.entity.js';
import { AiProviderError } from '../knowledge-bases.errors.js';
import type { KnowledgeIndexes } from '../knowledge-indexes.js';
import type { KnowledgeAnswer, KnowledgeResponder } from '../knowledge-responder.js';
import { inSpan, SpanKind, tracingEnabled } from '../../common/tracing/trace-context.js';

/** Entries given to the model: the best BM25 matches only, to keep prompts small and on topic. */
export const PROMPT_ENTRIES = 5;
export const PROVIDER_TIMEOUT_MS = 15_000;
/** How much of a failing provider's body is logged (none of it reaches the execution's error). */
const ERROR_BODY_CHARACTERS = 200;

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
}

/**
 * AI_PROVIDER=openai: an OpenAI-compatible `POST {AI_BASE_URL}/chat/completions` writes the
 * answer from the best-ranked entries, at temperature 0. Retrieval and confidence stay BM25's:
 * below the threshold the fallback is answered without calling the provider (there is nothing
 * relevant to ground an answer on), otherwise the confidence is the best entry's. A failing
 * provider throws AiProviderError; it is never replaced silently by the fallback.
 */
export class OpenAiResponder implements KnowledgeResponder {
  private readonly logger = new Logger(OpenAiResponder.name);

  constructor(
    private readonly ai: AppConfig['ai'],
    private readonly indexes: KnowledgeIndexes,
    private readonly timeoutMs = PROVIDER_TIMEOUT_MS,
  ) {
    if (!ai.baseUrl) throw new Error('OpenAiResponder needs AI_BASE_URL');
  }

  async answer(organizationId: string, knowledgeBase: string, question: string): Promise<KnowledgeAnswer> {
    const ranked = (await this.indexes.get(organizationId, knowledgeBase)).rank(question, PROMPT_ENTRIES);
    const confidence = ranked[0]?.confidence ?? 0;
    if (ranked.length === 0 || confidence < this.ai.confidenceThreshold) {
      return { response: this.ai.fallbackResponse, confidence };
    }
    const response = await this.complete(this.systemPrompt(ranked.map((r) => r.entry)), question);
    return { response, confidence };
  }

  private systemPrompt(entries: KnowledgeEntry[]): string {
    const listed = entries.map((e, i) => `${i + 1}. Q: ${e.question}\n   A: ${e.answer}`).join('\n');
    return [
      "You are a customer support assistant. Answer the customer's message using only the knowledge base entries below.",
      'Reply with the answer text only, in the language of the customer\'s message.',
      `If the entries do not answer the message, reply exactly: ${this.ai.fallbackResponse}`,
      '',
      'Knowledge base entries:',
      listed,
    ].join('\n');
  }

  /** Traces on: the call is a span with the provider and the model (never the prompt, the answer or the key). */
  private complete(system: string, question: string): Promise<string> {
    if (!tracingEnabled()) return this.completeUntraced(system, question);
    return inSpan('ai.complete', { 'ai.provider': 'openai', 'ai.model': this.ai.model }, () => this.completeUntraced(system, question), { kind: SpanKind.CLIENT });
  }

  private async completeUntraced(system: string, question: string): Promise<string> {
    const url = `${this.ai.baseUrl}/chat/completions`;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (this.ai.apiKey) headers.Authorization = `Bearer ${this.ai.apiKey}`;
    const body = JSON.stringify({
      model: this.ai.model,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: question },
      ],
      temperature: 0,
    });

    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await res.text();
    } catch (error) {
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw new AiProviderError(`AI provider did not answer within ${this.timeoutMs / 1000} s`, { cause: error, transient: true });
      }
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      this.logger.warn(`AI provider request failed (POST ${url}): ${reason}`);
      throw new AiProviderError('AI provider could not be reached', { cause: error, transient: true });
    }

    if (!res.ok) {
      this.logger.warn(`AI provider answered HTTP ${res.status} (POST ${url}): ${text.slice(0, ERROR_BODY_CHARACTERS)}`);
      const transient = res.status === 408 || res.status === 429 || res.status >= 500;
      throw new AiProviderError(`AI provider ${transient ? 'failed' : 'refused the request'} (HTTP ${res.status})`, { transient });
    }
    let parsed: ChatCompletion;
    try {
      parsed = JSON.parse(text) as ChatCompletion;
    } catch (error) {
      throw new AiProviderError('AI provider answered malformed JSON', { cause: error, transient: true });
    }
    const content = parsed?.choices?.[0]?.message?.content;
    if (typeof content !== 'string' || content.trim() === '') {
      throw new AiProviderError('AI provider answer has no choices[0].message.content', { transient: false });
    }
    return content.trim();
  }
}
