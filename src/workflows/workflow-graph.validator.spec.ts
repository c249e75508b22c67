import { describe, expect, it } from 'vitest';
import { DomainError } from '../common/errors/domain-error.js';
import { MAX_MESSAGE_LENGTH } from './node-types/message.node-type.js';
import { MAX_NODES, validateWorkflowConfiguration } from './workflow-graph.validator.js';
import { InvalidNodeConfigError, InvalidWorkflowConfigError } from './workflows.errors.js';

/** The error validateWorkflowConfiguration throws for `config`; fails the test when it does not throw. */
function failure(config: unknown): DomainError {
  try {
    validateWorkflowConfiguration(config);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error(`expected ${JSON.stringify(config)?.slice(0, 200)} to be refused`);
}

/** Asserts a whole-graph fault: 400 INVALID_WORKFLOW_CONFIG pointing at `field`. */
function expectGraphError(config: unknown, field: string): void {
  const error = failure(config);
  expect(error).toBeInstanceOf(InvalidWorkflowConfigError);
  expect({ code: error.code, status: error.status, field: error.extra.field }).toEqual({ code: 'INVALID_WORKFLOW_CONFIG', status: 400, field });
}

/** Asserts a per-node fault: 422 INVALID_NODE_CONFIG pointing at `field`. */
function expectNodeError(config: unknown, field: string): void {
  const error = failure(config);
  expect(error).toBeInstanceOf(InvalidNodeConfigError);
  expect({ code: error.code, status: error.status, field: error.extra.field }).toEqual({ code: 'INVALID_NODE_CONFIG', status: 422, field });
}

const message = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: 'message', content: `Hello from ${id}`, ...extra });
const form = (fields: unknown, extra: Record<string, unknown> = {}) => ({ id: 'f', type: 'form', fields, ...extra });

describe('validateWorkflowConfiguration', () => {
  describe('valid graphs', () => {
    it('accepts an empty node list, and a configuration without nodes as an empty one', () => {
      expect(validateWorkflowConfiguration({ nodes: [] })).toEqual({ nodes: [] });
      expect(validateWorkflowConfiguration({})).toEqual({ nodes: [] });
    });

    it('accepts a single node', () => {
      const config = { nodes: [message('only')] };
      expect(validateWorkflowConfiguration(config)).toEqual(config);
    });

    it('accepts a chain of every node type with a trigger block, and returns it unchanged', () => {
      const config = {
        trigger: { type: 'message', keywords: ['help', 'support'] },
        nodes: [
          message('welcome', { next: 'answer' }),
          { id: 'answer', type: 'ai_response', knowledge_base: 'faq', next: 'contact' },
          {
            id: 'contact',
            type: 'form',
            fields: [
              { name: 'email', type: 'email', required: true, label: 'Your email' },
              { name: 'score', type: 'nps' },
            ],
          },
        ],
      };
      expect(validateWorkflowConfiguration(config)).toEqual(config);
    });

    it('accepts every trigger type, and a trigger without keywords', () => {
      for (const type of ['message', 'schedule', 'webhook', 'api']) {
        expect(validateWorkflowConfiguration({ trigger: { type }, nodes: [] })).toEqual({ trigger: { type }, nodes: [] });
      }
    });

    it('accepts a node whose next points backwards without forming a cycle', () => {
      const config = { nodes: [message('a'), message('b', { next: 'a' })] };
      expect(validateWorkflowConfiguration(config)).toEqual(config);
    });

    it('accepts exactly the maximum number of nodes', () => {
      const nodes = Array.from({ length: MAX_NODES }, (_, i) => message(`n${i}`));
      expect(validateWorkflowConfiguration({ nodes }).nodes).toHaveLength(MAX_NODES);
    });

    it('accepts content of exactly the maximum length', () => {
      expect(() => validateWorkflowConfiguration({ nodes: [message('a', { content: 'x'.repeat(MAX_MESSAGE_LENGTH) })] })).not.toThrow();
    });

    it('counts content in code points, as the document does', () => {
      expect(() => validateWorkflowConfiguration({ nodes: [message('a', { content: '😀'.repeat(MAX_MESSAGE_LENGTH) })] })).not.toThrow();
      expect(() => validateWorkflowConfiguration({ nodes: [message('a', { content: '😀'.repeat(MAX_MESSAGE_LENGTH + 1) })] })).toThrow();
    });
  });

  describe('configuration shape', () => {
    it('refuses a configuration that is not an object', () => {
      for (const config of [null, undefined, 'nodes', 42, [], [message('a')]]) {
        expectGraphError(config, 'configuration');
      }
    });

    it('refuses an unknown configuration key', () => {
      expectGraphError({ nodes: [], steps: [] }, 'configuration.steps');
    });

    it('refuses nodes that are not an array', () => {
      for (const nodes of ['a', 1, { 0: message('a') }, true]) {
        expectGraphError({ nodes }, 'configuration.nodes');
      }
    });

    it('refuses more than the maximum number of nodes', () => {
      const nodes = Array.from({ length: MAX_NODES + 1 }, (_, i) => message(`n${i}`));
      expectGraphError({ nodes }, 'configuration.nodes');
    });

    it('refuses a node that is not an object', () => {
      expectGraphError({ nodes: [message('a'), 'b'] }, 'configuration.nodes[1]');
      expectGraphError({ nodes: [null] }, 'configuration.nodes[0]');
      expectGraphError({ nodes: [message('a'), [message('b')]] }, 'configuration.nodes[1]');
    });

    it('uses the path it is given in field', () => {
      const error = failure(undefined);
      expect(error.extra.field).toBe('configuration');
      expect(() => validateWorkflowConfiguration({ nodes: 'x' }, 'body.configuration')).toThrow(
        expect.objectContaining({ code: 'INVALID_WORKFLOW_CONFIG', extra: { field: 'body.configuration.nodes' } }),
      );
    });
  });

  describe('node ids', () => {
    it('refuses a missing id', () => {
      expectGraphError({ nodes: [message('a'), { type: 'message', content: 'hi' }] }, 'configuration.nodes[1].id');
    });

    it('refuses an id that is not a string', () => {
      expectGraphError({ nodes: [message('a'), { id: 2, type: 'message', content: 'hi' }] }, 'configuration.nodes[1].id');
    });

    it('refuses an empty id, an id with bad characters and an id longer than 64 characters', () => {
      for (const id of ['', 'has space', 'slash/id', 'ü', 'x'.repeat(65)]) {
        expectGraphError({ nodes: [message('a'), message(id)] }, 'configuration.nodes[1].id');
      }
      expect(() => validateWorkflowConfiguration({ nodes: [message('x'.repeat(64)), message('a_b.c:d-e')] })).not.toThrow();
    });

    it('refuses a duplicate id at its second use', () => {
      expectGraphError({ nodes: [message('a'), message('b'), message('a')] }, 'configuration.nodes[2].id');
    });

    it('checks ids before node types', () => {
      expectGraphError({ nodes: [{ id: 'bad id', type: 'unknown' }] }, 'configuration.nodes[0].id');
    });
  });

  describe('node types', () => {
    it('refuses an unknown type with 422', () => {
      expectNodeError({ nodes: [message('a'), { id: 'b', type: 'webhook_call' }] }, 'configuration.nodes[1].type');
    });

    it('refuses a missing or non-string type with 422', () => {
      expectNodeError({ nodes: [{ id: 'a', content: 'hi' }] }, 'configuration.nodes[0].type');
      expectNodeError({ nodes: [message('a'), { id: 'b', type: 7 }] }, 'configuration.nodes[1].type');
    });

    it('refuses a key the node type does not have', () => {
      expectNodeError({ nodes: [message('a', { knowledge_base: 'faq' })] }, 'configuration.nodes[0].knowledge_base');
      expectNodeError({ nodes: [message('a'), { id: 'b', type: 'ai_response', knowledge_base: 'faq', colour: 'red' }] }, 'configuration.nodes[1].colour');
    });
  });

  describe('message nodes', () => {
    it('refuses a message without content', () => {
      expectNodeError({ nodes: [message('a'), { id: 'b', type: 'message' }] }, 'configuration.nodes[1].content');
    });

    it('refuses empty, blank and non-string content', () => {
      for (const content of ['', '   ', 12, null]) {
        expectNodeError({ nodes: [message('a', { content })] }, 'configuration.nodes[0].content');
      }
    });

    it('refuses content over the maximum length', () => {
      expectNodeError({ nodes: [message('a', { content: 'x'.repeat(MAX_MESSAGE_LENGTH + 1) })] }, 'configuration.nodes[0].content');
    });
  });

  describe('ai_response nodes', () => {
    it('refuses an ai_response without knowledge_base', () => {
      expectNodeError({ nodes: [message('a'), message('b'), { id: 'c', type: 'ai_response' }] }, 'configuration.nodes[2].knowledge_base');
    });

    it('refuses an empty or non-string knowledge_base', () => {
      for (const knowledge_base of ['', ' ', 3, ['faq']]) {
        expectNodeError({ nodes: [{ id: 'a', type: 'ai_response', knowledge_base }] }, 'configuration.nodes[0].knowledge_base');
      }
    });
  });

  describe('form nodes', () => {
    it('refuses a form without fields, with no fields or with fields that are not an array', () => {
      expectNodeError({ nodes: [{ id: 'f', type: 'form' }] }, 'configuration.nodes[0].fields');
      expectNodeError({ nodes: [form([])] }, 'configuration.nodes[0].fields');
      expectNodeError({ nodes: [form({ name: 'email', type: 'email' })] }, 'configuration.nodes[0].fields');
    });

    it('refuses a field that is not an object', () => {
      expectNodeError({ nodes: [form([{ name: 'a', type: 'text' }, 'b'])] }, 'configuration.nodes[0].fields[1]');
    });

    it('refuses a missing or bad field name', () => {
      expectNodeError({ nodes: [form([{ type: 'text' }])] }, 'configuration.nodes[0].fields[0].name');
      for (const name of ['', '1st', 'first name', '_x', 'a'.repeat(65), 5]) {
        expectNodeError({ nodes: [message('m'), form([{ name: 'ok', type: 'text' }, { name, type: 'text' }])] }, 'configuration.nodes[1].fields[1].name');
      }
    });

    it('refuses duplicate field names at the second one', () => {
      expectNodeError(
        { nodes: [form([{ name: 'email', type: 'email' }, { name: 'phone', type: 'phone' }, { name: 'email', type: 'text' }])] },
        'configuration.nodes[0].fields[2].name',
      );
    });

    it('refuses a missing or unknown field type', () => {
      expectNodeError({ nodes: [form([{ name: 'a' }])] }, 'configuration.nodes[0].fields[0].type');
      expectNodeError({ nodes: [form([{ name: 'a', type: 'text' }, { name: 'b', type: 'colour' }])] }, 'configuration.nodes[0].fields[1].type');
    });

    it('refuses a required flag that is not a boolean', () => {
      for (const required of ['yes', 1, null]) {
        expectNodeError({ nodes: [form([{ name: 'a', type: 'text', required }])] }, 'configuration.nodes[0].fields[0].required');
      }
    });

    it('refuses an empty label', () => {
      expectNodeError({ nodes: [form([{ name: 'a', type: 'text', label: '' }])] }, 'configuration.nodes[0].fields[0].label');
    });

    it('refuses an unknown field key', () => {
      expectNodeError({ nodes: [form([{ name: 'a', type: 'text', placeholder: 'x' }])] }, 'configuration.nodes[0].fields[0].placeholder');
    });
  });

  describe('links', () => {
    it('refuses a next naming a node that does not exist', () => {
      expectGraphError({ nodes: [message('a', { next: 'b' }), message('b', { next: 'nowhere' })] }, 'configuration.nodes[1].next');
    });

    it('refuses a next that is not a string', () => {
      expectGraphError({ nodes: [message('a', { next: 1 }), message('b')] }, 'configuration.nodes[0].next');
      expectGraphError({ nodes: [message('a', { next: null })] }, 'configuration.nodes[0].next');
    });

    it('refuses a self-loop at the node', () => {
      expectGraphError({ nodes: [message('a', { next: 'b' }), message('b', { next: 'b' })] }, 'configuration.nodes[1].next');
    });

    it('refuses a two-node cycle at the node whose next closes it', () => {
      expectGraphError({ nodes: [message('a', { next: 'b' }), message('b', { next: 'a' })] }, 'configuration.nodes[1].next');
    });

    it('refuses a three-node cycle at the node whose next closes it', () => {
      expectGraphError(
        { nodes: [message('a', { next: 'b' }), message('b', { next: 'c' }), message('c', { next: 'a' })] },
        'configuration.nodes[2].next',
      );
    });

    it('finds a cycle that the entry node only leads into', () => {
      expectGraphError(
        { nodes: [message('entry', { next: 'x' }), message('x', { next: 'y' }), message('y', { next: 'z' }), message('z', { next: 'x' })] },
        'configuration.nodes[3].next',
      );
    });

    it('finds a cycle that is not reachable from the entry node', () => {
      expectGraphError({ nodes: [message('entry'), message('x', { next: 'y' }), message('y', { next: 'x' })] }, 'configuration.nodes[2].next');
    });
  });

  describe('trigger', () => {
    it('refuses a trigger that is not an object', () => {
      expectGraphError({ trigger: 'message', nodes: [] }, 'configuration.trigger');
    });

    it('refuses a missing or unknown trigger type', () => {
      expectGraphError({ trigger: { keywords: ['hi'] }, nodes: [] }, 'configuration.trigger.type');
      expectGraphError({ trigger: { type: 'email' }, nodes: [] }, 'configuration.trigger.type');
    });

    it('refuses an unknown trigger key', () => {
      expectGraphError({ trigger: { type: 'message', cron: '* * * * *' }, nodes: [] }, 'configuration.trigger.cron');
    });

    it('refuses keywords that are not an array', () => {
      expectGraphError({ trigger: { type: 'message', keywords: 'help' }, nodes: [] }, 'configuration.trigger.keywords');
    });

    it('refuses an empty, blank, non-string or too long keyword at its index', () => {
      for (const keyword of ['', '  ', 3, 'k'.repeat(201)]) {
        expectGraphError({ trigger: { type: 'message', keywords: ['help', keyword] }, nodes: [] }, 'configuration.trigger.keywords[1]');
      }
    });
  });
});
