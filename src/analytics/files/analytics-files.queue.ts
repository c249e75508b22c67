/** The Bull queue that makes report and export files: one job per file, whose job id is the file id. */
export const ANALYTICS_FILES_QUEUE = 'analytics-files';

export const AnalyticsFileJobs = {
  generate: 'generate',
} as const;

export interface GenerateFileJob {
  fileId: string;
}

/** A crash or a database outage gets one more try; then the file is marked failed. */
export const GENERATE_ATTEMPTS = 3;

export function generateJobOptions(fileId: string) {
  return { jobId: fileId, attempts: GENERATE_ATTEMPTS, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: true, removeOnFail: true };
}
