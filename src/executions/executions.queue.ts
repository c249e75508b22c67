/** The execution engine's Bull queue: its name, job names and payloads. */
export const EXECUTIONS_QUEUE = 'executions';

export const ExecutionJobs = {
  /** Run an execution from its cursor until it finishes or waits; consumes routed inbound messages. */
  run: 'run',
  /** Fail a waiting execution whose wait has expired. */
  expire: 'expire',
  /** Periodic: expire overdue waits and re-enqueue running executions whose job was lost. */
  sweep: 'sweep',
} as const;

export interface RunJob {
  executionId: string;
  /** W3C traceparent of the span that queued the run (traces on only): the run's job span is its child. */
  traceparent?: string;
}

export interface ExpireJob {
  executionId: string;
}
