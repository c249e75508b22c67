import { PeriodQuery } from '../../common/date-range.js';

/** `start_date`, `end_date` (default: the last 30 days) and `granularity` (default day) of a metrics request. */
export class MetricsQuery extends PeriodQuery {}
