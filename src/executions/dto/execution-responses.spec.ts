import { describe, expect, it } from 'vitest';
import type { TriggerExecution } from '../entities/trigger-execution.entity.js';
import type { WorkflowExecution } from '../entities/workflow-execution.entity.js';
import { TriggerExecutionDetailResponse, TriggerExecutionResponse } from './trigger-execution.response.js';
import { WorkflowExecutionDetailResponse, WorkflowExecutionResponse } from './workflow-execution.response.js';

const at = new Date('2025-03-03T09:15:00Z');

function triggerExecution(overrides: Partial<TriggerExecution> = {}): TriggerExecution {
  return {
    id: 'te', organizationId: 'org', triggerId: 'tr', workflowId: 'wf', workflowExecutionId: 'we', status: 'success',
    input: { message: 'hi', customer_id: '+1555', channel: 'whatsapp', metadata: { user_agent: 'ua', timestamp: '2025-03-03T09:15:00.000Z' } },
    error: null, triggeredAt: at, completedAt: at, durationMs: 0, createdAt: at, ...overrides,
  };
}

describe('TriggerExecutionResponse', () => {
  it('shows message, customer_id and channel of the input, never its metadata or data, in list items', () => {
    const item = TriggerExecutionResponse.from(triggerExecution({ input: { message: 'hi', customer_id: 'c', channel: 'voice', metadata: { user_agent: 'x' }, data: { a: 1 }, secret: 's' } }));
    expect(item.input).toEqual({ message: 'hi', customer_id: 'c', channel: 'voice' });
    expect(item.output).toEqual({ workflow_execution_id: 'we' });
    expect(item).not.toHaveProperty('error');
  });

  it('turns missing or non-string input fields into null', () => {
    expect(TriggerExecutionResponse.from(triggerExecution({ input: { message: 5, customer_id: null, channel: ['x'] } })).input).toEqual({
      message: null, customer_id: null, channel: null,
    });
  });

  it('adds metadata (an empty object when absent), data when present, the workflow status and the error in the detail', () => {
    const detail = TriggerExecutionDetailResponse.from(triggerExecution(), 'running');
    expect(detail.input).toEqual({ message: 'hi', customer_id: '+1555', channel: 'whatsapp', metadata: { user_agent: 'ua', timestamp: '2025-03-03T09:15:00.000Z' } });
    expect(detail.output).toEqual({ workflow_execution_id: 'we', workflow_status: 'running' });
    expect(detail.error).toBeNull();

    const refused = TriggerExecutionDetailResponse.from(
      triggerExecution({ workflowExecutionId: null, status: 'failed', input: { data: { n: 1 }, metadata: 'bad' }, error: { code: 'TRIGGER_INACTIVE', message: 'paused' } }),
      null,
    );
    expect(refused.input).toEqual({ message: null, customer_id: null, channel: null, metadata: {}, data: { n: 1 } });
    expect(refused.output).toEqual({ workflow_execution_id: null, workflow_status: null });
    expect(refused.error).toEqual({ code: 'TRIGGER_INACTIVE', message: 'paused' });
  });
});

describe('WorkflowExecutionResponse', () => {
  const execution = {
    id: 'we', organizationId: 'org', workflowId: 'wf', workflowVersion: 3, triggerId: 'tr', triggerExecutionId: 'te', customerId: 'internal-uuid',
    customerRef: '+1555', channel: 'whatsapp', channelAccountId: null, status: 'failed', input: { message: 'hi' }, output: { response: 'r', next_action: 'end' },
    error: { code: 'NODE_FAILED', message: 'boom', node_id: 'n1' }, state: { cursor: 'n2' }, waiting: false, waitExpiresAt: null,
    startedAt: at, completedAt: at, durationMs: 12, retryOf: 'we0', createdAt: at, updatedAt: at,
  } as WorkflowExecution;

  it('shows the client\'s customer id and none of the engine\'s bookkeeping in list items', () => {
    expect(WorkflowExecutionResponse.from(execution)).toEqual({
      id: 'we', workflow_id: 'wf', status: 'failed', started_at: '2025-03-03T09:15:00.000Z', completed_at: '2025-03-03T09:15:00.000Z', duration_ms: 12, customer_id: '+1555', channel: 'whatsapp',
      input: { message: 'hi' }, output: { response: 'r', next_action: 'end' }, workflow_version: 3, trigger_id: 'tr', retry_of: 'we0',
    });
  });

  it('adds the steps and the error in the detail', () => {
    const detail = WorkflowExecutionDetailResponse.from({ ...execution, steps: [] });
    expect(detail.steps).toEqual([]);
    expect(detail.error).toEqual({ code: 'NODE_FAILED', message: 'boom', node_id: 'n1' });
    expect(detail).not.toHaveProperty('state');
  });
});
