/** The schedules queue: one Bull repeatable job per active schedule trigger. */
export const SCHEDULES_QUEUE = 'schedules';

export const ScheduleJobs = {
  tick: 'tick',
} as const;

export interface TickJob {
  triggerId: string;
}
