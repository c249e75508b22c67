import { SetMetadata } from '@nestjs/common';

/**
 * The spec's analytics rate-limit classes (Limits table). The throttling itself is another
 * change's; each analytics route names its class here so the limits can be wired by this metadata.
 */
export const AnalyticsRateLimit = {
  /** 1000 per hour. */
  realtime: 'analytics_realtime',
  /** 100 per hour. */
  historical: 'analytics_historical',
  /** 50 per hour. */
  reports: 'analytics_reports',
  /** 20 per hour. */
  export: 'analytics_export',
} as const;
export type AnalyticsRateLimitClass = (typeof AnalyticsRateLimit)[keyof typeof AnalyticsRateLimit];

export const RATE_LIMIT_CLASS = 'analytics:rateLimitClass';

export const RateLimitClass = (limitClass: AnalyticsRateLimitClass) => SetMetadata(RATE_LIMIT_CLASS, limitClass);
