import { nonEmptyString, type NodeTypeDefinition } from './node-type.js';

export const MAX_MESSAGE_LENGTH = 4096;
const MAX_TEMPLATE_COMPONENTS = 20;

/**
 * Sends `content` to the customer through the channel adapter. Optional `template` ({name, language,
 * components?}, a WhatsApp message template approved in the business's WhatsApp Manager): sent instead
 * of `content` when the execution replies through a WhatsApp account outside the customer's 24-hour
 * window.
 */
export const messageNodeType: NodeTypeDefinition = {
  type: 'message',
  keys: ['content', 'template'],
  validate(node) {
    if (node.content === undefined) return { key: 'content', message: 'A message node needs content' };
    if (!nonEmptyString(node.content, MAX_MESSAGE_LENGTH)) {
      return { key: 'content', message: `content must be a non-empty string of at most ${MAX_MESSAGE_LENGTH} characters` };
    }
    if (node.template !== undefined) return templateFault(node.template);
    return null;
  },
};

function templateFault(template: unknown): { key: string; message: string } | null {
  if (typeof template !== 'object' || template === null || Array.isArray(template)) {
    return { key: 'template', message: 'template must be an object {name, language, components?}' };
  }
  const { name, language, components, ...rest } = template as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return { key: `template.${unknown}`, message: `template.${unknown} is not a template field (name, language, components)` };
  if (typeof name !== 'string' || !/^[a-z0-9_]{1,512}$/.test(name)) {
    return { key: 'template.name', message: 'template.name must be a template name: lower-case letters, digits and underscores (at most 512)' };
  }
  if (typeof language !== 'string' || !/^[a-z]{2,3}(_[A-Z]{2})?$/.test(language)) {
    return { key: 'template.language', message: 'template.language must be a language code such as en or en_US' };
  }
  if (components !== undefined) {
    if (!Array.isArray(components) || components.length > MAX_TEMPLATE_COMPONENTS || components.some((c) => typeof c !== 'object' || c === null || Array.isArray(c))) {
      return { key: 'template.components', message: `template.components must be an array of at most ${MAX_TEMPLATE_COMPONENTS} objects (WhatsApp's header, body and button parameters)` };
    }
  }
  return null;
}
