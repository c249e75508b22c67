import { gauge } from './metric-factory.js';

/** What the scrape-time gauges show, gathered once per cache period (see MetricsCollector). */
export interface ScrapeSnapshot {
  /** Per Bull queue; absent when Redis did not answer. */
  queues?: { queue: string; waiting: number; active: number; delayed: number; failed: number; oldestWaitingSeconds: number }[];
  /** Absent when PostgreSQL did not answer. */
  database?: {
    outboxLagSeconds: number;
    sendBacklog: number;
    sendBacklogOldestSeconds: number;
    rollupBacklog: { log: string; rows: number }[];
  };
}

/** The readers of the processes' apps, newest last (tests run several apps in one process; one each otherwise). */
const sources: (() => Promise<ScrapeSnapshot>)[] = [];

/** Where the gauges read from (the app's MetricsCollector). Returns the function that removes it again. */
export function setScrapeSource(read: () => Promise<ScrapeSnapshot>): () => void {
  sources.push(read);
  return () => {
    const at = sources.indexOf(read);
    if (at >= 0) sources.splice(at, 1);
  };
}

async function snapshot(): Promise<ScrapeSnapshot> {
  const read = sources.at(-1);
  return read ? read() : {};
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

export const queueJobs = gauge('bull_queue_jobs', 'Jobs of each Bull queue by state (waiting, active, delayed, failed)', ['queue', 'state'], async function () {
  const { queues } = await snapshot();
  this.reset();
  for (const q of queues ?? []) for (const state of QUEUE_STATES) this.set({ queue: q.queue, state }, q[state]);
});

export const queueOldestWaiting = gauge('bull_queue_oldest_waiting_age_seconds', 'Age of the oldest waiting job of each Bull queue (0 when none waits)', ['queue'], async function () {
  const { queues } = await snapshot();
  this.reset();
  for (const q of queues ?? []) this.set({ queue: q.queue }, q.oldestWaitingSeconds);
});

export const outboxLag = gauge('outbox_lag_seconds', 'Age of the oldest unpublished outbox event (0 when every event is published)', [], async function () {
  const { database } = await snapshot();
  this.reset();
  if (database) this.set(database.outboxLagSeconds);
});

export const rollupBacklog = gauge('rollup_backlog_rows', 'Change-log rows not folded into the rollups yet, per log (an upper-bound estimate from the primary key)', ['log'], async function () {
  const { database } = await snapshot();
  this.reset();
  for (const r of database?.rollupBacklog ?? []) this.set({ log: r.log }, r.rows);
});

export const sendBacklog = gauge('channel_send_backlog', 'Messages queued for a provider or being sent, over every channel account', [], async function () {
  const { database } = await snapshot();
  this.reset();
  if (database) this.set(database.sendBacklog);
});

export const sendBacklogOldest = gauge('channel_send_backlog_oldest_seconds', 'Age of the oldest message queued for a provider or being sent (0 when none)', [], async function () {
  const { database } = await snapshot();
  this.reset();
  if (database) this.set(database.sendBacklogOldestSeconds);
});
