/** The schedules queue: one Bull repeatable job per active schedule trigger. */
export const SCHEDULES_QUEUE = 'schedules';

export const ScheduleJobs = {
  tick: 'tick',
} as const;

export interface TickJob {
  triggerId: string;
}

/** Bursts: the turn of each burst of held messages (a delayed job at its deadline), and the sweep. */
export const BURSTS_QUEUE = 'bursts';

export const BurstJobs = {
  /** Take a burst's turn (one job per burst: its id is `turn:<burst id>`). */
  turn: 'turn',
  /** Periodic: bursts whose job was lost, or whose worker died midway. */
  sweep: 'sweep',
} as const;

export interface TurnJob {
  burstId: string;
}
