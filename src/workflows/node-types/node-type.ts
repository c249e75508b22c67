import { codePointLength } from '../../common/validation/text-length.decorator.js';

/** A node as stored in `configuration.nodes`. */
export interface WorkflowNode {
  id: string;
  type: string;
  next?: string;
  [key: string]: unknown;
}

/** What is wrong with a node: the message, and the key (relative to the node) to point `field` at. */
export interface NodeIssue {
  key: string;
  message: string;
}

/**
 * One node type's configuration rules. Adding a node type is one file in this folder that
 * implements this, plus its line in NODE_TYPES (index.ts); the execution engine keeps its
 * runtime behaviour in a registry of its own.
 */
export interface NodeTypeDefinition {
  readonly type: string;
  /** The keys a node of this type may carry besides id, type and next. */
  readonly keys: readonly string[];
  validate(node: WorkflowNode): NodeIssue | null;
}

export function nonEmptyString(value: unknown, maxLength: number): boolean {
  return typeof value === 'string' && value.trim().length > 0 && codePointLength(value) <= maxLength;
}
