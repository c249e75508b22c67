import { InvalidRequestError } from '../common/errors/common.errors.js';
import { DomainError } from '../common/errors/domain-error.js';

export { InvalidDateRangeError, InvalidGranularityError } from '../common/date-range.js';
export { WorkflowNotFoundError } from '../workflows/workflows.errors.js';

export class InvalidMetricsError extends DomainError {
  constructor(unknown: string[], accepted: readonly string[]) {
    super('INVALID_METRICS', 400, `Unknown metric name(s): ${unknown.join(', ')}; accepted: ${accepted.join(', ')}`, { field: 'metrics' });
  }
}

export class InvalidTimezoneError extends InvalidRequestError {
  constructor() {
    super('timezone must be an IANA time zone name such as Europe/Berlin', 'timezone');
  }
}
