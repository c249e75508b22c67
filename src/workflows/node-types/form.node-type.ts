import { nonEmptyString, type NodeIssue, type NodeTypeDefinition } from './node-type.js';

/** Answer types a form field can ask for; each has its own answer check in the execution engine. */
export const FORM_FIELD_TYPES = ['text', 'email', 'phone', 'number', 'date', 'boolean', 'rating', 'nps'] as const;
export type FormFieldType = (typeof FORM_FIELD_TYPES)[number];

export interface FormField {
  name: string;
  type: FormFieldType;
  required?: boolean;
  label?: string;
}

const FIELD_KEYS = new Set(['name', 'type', 'required', 'label']);
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const MAX_FORM_FIELDS = 50;

function fieldIssue(field: unknown, index: number, seen: Set<string>): NodeIssue | null {
  const at = `fields[${index}]`;
  if (typeof field !== 'object' || field === null || Array.isArray(field)) return { key: at, message: 'A form field must be an object' };
  const f = field as Record<string, unknown>;
  const unknown = Object.keys(f).find((k) => !FIELD_KEYS.has(k));
  if (unknown) return { key: `${at}.${unknown}`, message: `Unknown form field property ${unknown}` };
  if (typeof f.name !== 'string' || !FIELD_NAME.test(f.name)) {
    return { key: `${at}.name`, message: 'name must start with a letter and use letters, digits and _ (at most 64)' };
  }
  if (seen.has(f.name)) return { key: `${at}.name`, message: `Field name ${f.name} is used twice in this form` };
  seen.add(f.name);
  if (!(FORM_FIELD_TYPES as readonly unknown[]).includes(f.type)) {
    return { key: `${at}.type`, message: `type must be one of ${FORM_FIELD_TYPES.join(', ')}` };
  }
  if (f.required !== undefined && typeof f.required !== 'boolean') return { key: `${at}.required`, message: 'required must be a boolean' };
  if (f.label !== undefined && !nonEmptyString(f.label, 500)) {
    return { key: `${at}.label`, message: 'label must be a non-empty string of at most 500 characters' };
  }
  return null;
}

/** Asks the customer for each field in turn and waits for valid answers. */
export const formNodeType: NodeTypeDefinition = {
  type: 'form',
  keys: ['fields'],
  validate(node) {
    const fields = node.fields;
    if (!Array.isArray(fields) || fields.length === 0) return { key: 'fields', message: 'A form node needs at least one field' };
    if (fields.length > MAX_FORM_FIELDS) return { key: 'fields', message: `A form has at most ${MAX_FORM_FIELDS} fields` };
    const seen = new Set<string>();
    for (const [i, field] of fields.entries()) {
      const issue = fieldIssue(field, i, seen);
      if (issue) return issue;
    }
    return null;
  },
};
