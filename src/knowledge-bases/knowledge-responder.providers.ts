import type { Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { timedResponder } from './knowledge-bases.metrics.js';
import { KnowledgeIndexes } from './knowledge-indexes.js';
import { KNOWLEDGE_RESPONDER, type KnowledgeResponder } from './knowledge-responder.js';
import { BuiltinResponder } from './responders/builtin.responder.js';
import { OpenAiResponder } from './responders/openai.responder.js';

/** One responder per AI_PROVIDER value; adding a provider is one class and one line here. */
const RESPONDERS: Record<AppConfig['ai']['provider'], (ai: AppConfig['ai'], indexes: KnowledgeIndexes) => KnowledgeResponder> = {
  builtin: (ai, indexes) => new BuiltinResponder(ai, indexes),
  openai: (ai, indexes) => new OpenAiResponder(ai, indexes),
};

export const knowledgeResponderProvider: Provider = {
  provide: KNOWLEDGE_RESPONDER,
  inject: [AppConfig, KnowledgeIndexes],
  useFactory: (config: AppConfig, indexes: KnowledgeIndexes): KnowledgeResponder =>
    timedResponder(config.ai.provider, RESPONDERS[config.ai.provider](config.ai, indexes)),
};
