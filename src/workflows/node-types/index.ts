import { aiResponseNodeType } from './ai-response.node-type.js';
import { formNodeType } from './form.node-type.js';
import { messageNodeType } from './message.node-type.js';
import type { NodeTypeDefinition } from './node-type.js';

/** Every node type a workflow may use. */
export const NODE_TYPES: ReadonlyMap<string, NodeTypeDefinition> = new Map(
  [messageNodeType, aiResponseNodeType, formNodeType].map((t) => [t.type, t]),
);
