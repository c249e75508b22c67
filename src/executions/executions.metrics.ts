import { CHANNELS } from '../common/channels.js';
import { counter, histogram } from '../metrics/metric-factory.js';
import type { WorkflowExecution } from './entities/workflow-execution.entity.js';

/** Executions finished (success or failed), counted by the worker whose run committed the end. */
export const executionsFinished = counter('workflow_executions_finished_total', 'Executions finished, by status and channel', ['status', 'channel']);

/** Start to end of a finished execution (waits for replies included). */
export const executionDuration = histogram(
  'workflow_execution_duration_seconds',
  'Duration of finished executions, by status and channel',
  [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
  ['status', 'channel'],
);

const KNOWN_CHANNELS: ReadonlySet<string> = new Set(CHANNELS);

/**
 * Counts the executions that a committed statement finished: in memory, after the commit, no
 * round trip. The channel label is one of CHANNELS, `none` or `other` (never a free-form value).
 */
export function countFinished(executions: Iterable<WorkflowExecution>): void {
  for (const e of executions) {
    if (e.status === 'running') continue;
    const labels = { status: e.status, channel: e.channel === null ? 'none' : KNOWN_CHANNELS.has(e.channel) ? e.channel : 'other' };
    executionsFinished.inc(labels);
    if (e.durationMs !== null) executionDuration.observe(labels, e.durationMs / 1000);
  }
}
