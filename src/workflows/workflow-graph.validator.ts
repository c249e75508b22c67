import { codePointLength } from '../common/validation/text-length.decorator.js';
import { TRIGGER_TYPES } from '../triggers/entities/trigger.entity.js';
import { NODE_TYPES } from './node-types/index.js';
import type { WorkflowNode } from './node-types/node-type.js';
import { InvalidNodeConfigError, InvalidWorkflowConfigError } from './workflows.errors.js';

export const MAX_NODES = 200;
export const NODE_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const CONFIGURATION_KEYS = new Set(['trigger', 'nodes']);
const BASE_NODE_KEYS = ['id', 'type', 'next'];

export interface WorkflowConfiguration {
  trigger?: { type: string; keywords?: string[] };
  nodes: WorkflowNode[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a workflow's configuration and returns it typed. Whole-graph faults (shape, ids,
 * links, cycles) are 400 INVALID_WORKFLOW_CONFIG; a node that breaks its type's rules is
 * 422 INVALID_NODE_CONFIG. `field` always points at the offending value.
 */
export function validateWorkflowConfiguration(config: unknown, path = 'configuration'): WorkflowConfiguration {
  if (!isObject(config)) throw new InvalidWorkflowConfigError('configuration must be an object', path);
  const unknownKey = Object.keys(config).find((k) => !CONFIGURATION_KEYS.has(k));
  if (unknownKey) throw new InvalidWorkflowConfigError(`Unknown configuration property ${unknownKey}`, `${path}.${unknownKey}`);
  if (config.trigger !== undefined) validateTrigger(config.trigger, `${path}.trigger`);

  const nodes = config.nodes === undefined ? [] : config.nodes;
  if (!Array.isArray(nodes)) throw new InvalidWorkflowConfigError('nodes must be an array', `${path}.nodes`);
  if (nodes.length > MAX_NODES) throw new InvalidWorkflowConfigError(`A workflow has at most ${MAX_NODES} nodes`, `${path}.nodes`);

  const positions = new Map<string, number>();
  nodes.forEach((node: unknown, i) => {
    const at = `${path}.nodes[${i}]`;
    if (!isObject(node)) throw new InvalidWorkflowConfigError('A node must be an object', at);
    if (typeof node.id !== 'string' || !NODE_ID.test(node.id)) {
      throw new InvalidWorkflowConfigError('id must be 1-64 characters of letters, digits and _ . : -', `${at}.id`);
    }
    if (positions.has(node.id)) throw new InvalidWorkflowConfigError(`Node id ${node.id} is used twice`, `${at}.id`);
    positions.set(node.id, i);
    validateNode(node, at);
  });

  const typed = nodes as WorkflowNode[];
  typed.forEach((node, i) => {
    if (node.next !== undefined && (typeof node.next !== 'string' || !positions.has(node.next))) {
      throw new InvalidWorkflowConfigError('next must name a node of this workflow', `${path}.nodes[${i}].next`);
    }
  });
  const cycleAt = findCycle(typed);
  if (cycleAt !== undefined) {
    throw new InvalidWorkflowConfigError('next creates a cycle; a workflow must end', `${path}.nodes[${cycleAt}].next`);
  }
  return { ...(config.trigger !== undefined ? { trigger: config.trigger as WorkflowConfiguration['trigger'] } : {}), nodes: typed };
}

function validateTrigger(trigger: unknown, at: string): void {
  if (!isObject(trigger)) throw new InvalidWorkflowConfigError('trigger must be an object', at);
  const unknownKey = Object.keys(trigger).find((k) => k !== 'type' && k !== 'keywords');
  if (unknownKey) throw new InvalidWorkflowConfigError(`Unknown trigger property ${unknownKey}`, `${at}.${unknownKey}`);
  if (!(TRIGGER_TYPES as readonly unknown[]).includes(trigger.type)) {
    throw new InvalidWorkflowConfigError(`trigger.type must be one of ${TRIGGER_TYPES.join(', ')}`, `${at}.type`);
  }
  const keywords = trigger.keywords;
  if (keywords !== undefined) {
    if (!Array.isArray(keywords)) throw new InvalidWorkflowConfigError('keywords must be an array of strings', `${at}.keywords`);
    keywords.forEach((k: unknown, i) => {
      if (typeof k !== 'string' || k.trim() === '' || codePointLength(k) > 200) {
        throw new InvalidWorkflowConfigError('Each keyword must be a non-empty string of at most 200 characters', `${at}.keywords[${i}]`);
      }
    });
  }
}

function validateNode(node: Record<string, unknown>, at: string): void {
  const definition = typeof node.type === 'string' ? NODE_TYPES.get(node.type) : undefined;
  if (!definition) {
    throw new InvalidNodeConfigError(`type must be one of ${[...NODE_TYPES.keys()].join(', ')}`, `${at}.type`);
  }
  const allowed = new Set([...BASE_NODE_KEYS, ...definition.keys]);
  const unknownKey = Object.keys(node).find((k) => !allowed.has(k));
  if (unknownKey) throw new InvalidNodeConfigError(`A ${definition.type} node has no property ${unknownKey}`, `${at}.${unknownKey}`);
  const issue = definition.validate(node as WorkflowNode);
  if (issue) throw new InvalidNodeConfigError(issue.message, `${at}.${issue.key}`);
}

/**
 * Each node has at most one `next`, so a cycle is found by walking from every node; the node
 * reported is the one whose `next` closes the loop, first in array order of the walks.
 */
function findCycle(nodes: WorkflowNode[]): number | undefined {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const finished = new Set<number>();
  for (let start = 0; start < nodes.length; start++) {
    const onPath = new Set<number>();
    let current: number | undefined = start;
    while (current !== undefined && !finished.has(current)) {
      onPath.add(current);
      const next: string | undefined = nodes[current].next;
      const nextIndex: number | undefined = next === undefined ? undefined : index.get(next);
      if (nextIndex !== undefined && onPath.has(nextIndex)) return current;
      current = nextIndex;
    }
    for (const i of onPath) finished.add(i);
  }
  return undefined;
}
