import type { AppConfig } from '../../config/app-config.js';
import type { KnowledgeIndexes } from '../knowledge-indexes.js';
import type { KnowledgeAnswer, KnowledgeResponder } from '../knowledge-responder.js';

/**
 * AI_PROVIDER=builtin: the best BM25 entry's answer, with its normalised score as confidence.
 * Below the threshold (or with no entry sharing a word) the configured fallback is answered,
 * carrying the low confidence so the workflow can tell.
 */
export class BuiltinResponder implements KnowledgeResponder {
  constructor(
    private readonly ai: AppConfig['ai'],
    private readonly indexes: KnowledgeIndexes,
  ) {}

  async answer(organizationId: string, knowledgeBase: string, question: string): Promise<KnowledgeAnswer> {
    const best = (await this.indexes.get(organizationId, knowledgeBase)).best(question);
    if (!best) return { response: this.ai.fallbackResponse, confidence: 0 };
    if (best.confidence < this.ai.confidenceThreshold) return { response: this.ai.fallbackResponse, confidence: best.confidence };
    return { response: best.entry.answer, confidence: best.confidence };
  }
}
