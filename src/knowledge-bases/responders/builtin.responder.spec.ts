import { describe, expect, it } from 'vitest';
import type { AppConfig } from '../../config/app-config.js';
import { KnowledgeIndex } from '../knowledge-index.js';
import { KnowledgeBaseNotFoundError } from '../knowledge-bases.errors.js';
import type { KnowledgeIndexes } from '../knowledge-indexes.js';
import { BuiltinResponder } from './builtin.responder.js';

const FAQ = [
  { question: 'How do I reset my password?', answer: 'Use "Forgot password" on the sign-in page.' },
  { question: 'What are your opening hours?', answer: 'Monday to Friday, 9am to 6pm.' },
  { question: 'How can I get a refund for my order?', answer: 'Refunds are issued within 14 days of receiving the return.' },
];
const FALLBACK = 'Someone will get back to you.';
const ORG = '11111111-1111-4111-8111-111111111111';

function responder(confidenceThreshold = 0.3) {
  const index = new KnowledgeIndex(FAQ);
  const indexes = {
    get: async (org: string, name: string) => {
      if (org !== ORG || name !== 'faq') throw new KnowledgeBaseNotFoundError();
      return index;
    },
  } as unknown as KnowledgeIndexes;
  const ai: AppConfig['ai'] = { provider: 'builtin', model: 'unused', confidenceThreshold, fallbackResponse: FALLBACK };
  return new BuiltinResponder(ai, indexes);
}

describe('BuiltinResponder', () => {
  it('answers the best entry with its confidence', async () => {
    expect(await responder().answer(ORG, 'faq', 'How do I reset my password?')).toEqual({ response: FAQ[0].answer, confidence: 1 });
    const paraphrase = await responder().answer(ORG, 'faq', 'I forgot my password');
    expect(paraphrase.response).toBe(FAQ[0].answer);
    expect(paraphrase.confidence).toBeGreaterThanOrEqual(0.3);
    expect(paraphrase.confidence).toBeLessThan(1);
  });

  it('answers the fallback with the low confidence below the threshold', async () => {
    // A word of the answer only.
    const weak = await responder().answer(ORG, 'faq', 'days');
    expect(weak.confidence).toBeGreaterThan(0);
    expect(weak.confidence).toBeLessThan(0.3);
    expect(weak.response).toBe(FALLBACK);
    // The same match passes a lower threshold.
    expect(await responder(weak.confidence).answer(ORG, 'faq', 'days')).toEqual({ response: FAQ[2].answer, confidence: weak.confidence });
  });

  it('answers the fallback with confidence 0 when nothing matches, or the question is only stop words', async () => {
    for (const q of ['Is it going to rain tomorrow?', 'How do I?', '']) {
      expect(await responder().answer(ORG, 'faq', q)).toEqual({ response: FALLBACK, confidence: 0 });
    }
  });

  it('lets a missing knowledge base fail the call', async () => {
    await expect(responder().answer(ORG, 'nope', 'refund')).rejects.toBeInstanceOf(KnowledgeBaseNotFoundError);
  });
});
