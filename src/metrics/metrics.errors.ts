import { DomainError } from '../common/errors/domain-error.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="metrics"' };

export class MetricsTokenMissingError extends DomainError {
  constructor() {
    super('MISSING_AUTHENTICATION', 401, 'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>"', { headers: CHALLENGE });
  }
}

export class MetricsTokenInvalidError extends DomainError {
  constructor() {
    super('INVALID_TOKEN', 401, 'The metrics token is not the one configured', { headers: CHALLENGE });
  }
}

/** NODE_ENV=production without METRICS_TOKEN: only the machine itself may scrape. */
export class MetricsNotLocalError extends DomainError {
  constructor() {
    super('METRICS_FORBIDDEN', 403, 'Metrics are served to loopback clients only: set METRICS_TOKEN to scrape from elsewhere');
  }
}
