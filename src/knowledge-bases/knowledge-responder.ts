/** An answer to a customer's message from a knowledge base. */
export interface KnowledgeAnswer {
  response: string;
  /** 0..1: the normalised relevance of the best entry (or the provider's own figure). */
  confidence: number;
}

/**
 * Answers a question from an organization's named knowledge base. The built-in responder ranks
 * entries with BM25; AI_PROVIDER=openai selects an OpenAI-compatible chat-completions provider.
 */
export interface KnowledgeResponder {
  answer(organizationId: string, knowledgeBase: string, question: string): Promise<KnowledgeAnswer>;
}

export const KNOWLEDGE_RESPONDER = Symbol('KNOWLEDGE_RESPONDER');
