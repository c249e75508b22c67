import { histogram } from '../metrics/metric-factory.js';
import type { KnowledgeResponder } from './knowledge-responder.js';

/** An `ai_response` node's answer, request to answer, by AI_PROVIDER and outcome (ok, error). */
export const aiResponseDuration = histogram(
  'ai_response_duration_seconds',
  'Knowledge-base answers (ai_response nodes) by AI provider and outcome',
  [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
  ['provider', 'outcome'],
);

/** The responder, its answers timed into ai_response_duration_seconds. */
export function timedResponder(provider: string, responder: KnowledgeResponder): KnowledgeResponder {
  return {
    async answer(organizationId, knowledgeBase, question) {
      const end = aiResponseDuration.startTimer({ provider });
      try {
        const answer = await responder.answer(organizationId, knowledgeBase, question);
        end({ outcome: 'ok' });
        return answer;
      } catch (error) {
        end({ outcome: 'error' });
        throw error;
      }
    },
  };
}
