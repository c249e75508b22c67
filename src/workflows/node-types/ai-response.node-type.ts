import { nonEmptyString, type NodeTypeDefinition } from './node-type.js';

/** Answers the customer's message from the named knowledge base. */
export const aiResponseNodeType: NodeTypeDefinition = {
  type: 'ai_response',
  keys: ['knowledge_base'],
  validate(node) {
    if (node.knowledge_base === undefined) return { key: 'knowledge_base', message: 'An ai_response node needs a knowledge_base' };
    if (!nonEmptyString(node.knowledge_base, 200)) {
      return { key: 'knowledge_base', message: 'knowledge_base must be a non-empty string of at most 200 characters' };
    }
    return null;
  },
};
