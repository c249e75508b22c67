import { ENGAGEMENT_STATEMENTS } from './engagement.repository.js';
import { JOURNEY_STATEMENTS } from './journeys.repository.js';
import { PERFORMANCE_STATEMENTS } from './performance.repository.js';
import { REALTIME_STATEMENTS } from './realtime.repository.js';
import { WORKFLOW_ANALYTICS_STATEMENTS } from './workflow-analytics.repository.js';

/** Every analytics statement as sent, by name, for the EXPLAIN and timing scripts in bench/. */
export const ANALYTICS_STATEMENTS = {
  ...WORKFLOW_ANALYTICS_STATEMENTS,
  ...PERFORMANCE_STATEMENTS,
  ...ENGAGEMENT_STATEMENTS,
  ...JOURNEY_STATEMENTS,
  ...REALTIME_STATEMENTS,
};
