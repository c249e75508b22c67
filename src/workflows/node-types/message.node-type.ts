import { nonEmptyString, type NodeTypeDefinition } from './node-type.js';

export const MAX_MESSAGE_LENGTH = 4096;

/** Sends `content` to the customer through the channel adapter. */
export const messageNodeType: NodeTypeDefinition = {
  type: 'message',
  keys: ['content'],
  validate(node) {
    if (node.content === undefined) return { key: 'content', message: 'A message node needs content' };
    if (!nonEmptyString(node.content, MAX_MESSAGE_LENGTH)) {
      return { key: 'content', message: `content must be a non-empty string of at most ${MAX_MESSAGE_LENGTH} characters` };
    }
    return null;
  },
};
