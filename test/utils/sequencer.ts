import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The e2e files that take longest (they boot built worker and API processes, or stop and restart a
 * PostgreSQL or Redis of their own), longest first. With files running side by side the run ends
 * when its last file does: these start first, so that the short files fill the workers around them
 * instead of one of these starting last. Vitest's own order (its cache of the last run's durations,
 * else the file sizes) decides everything else. A file missing here is only started later.
 */
export const LONGEST_FIRST = [
  'faults-redis',
  'cli',
  'contract-fuzz',
  'startup',
  'webhooks-relay',
  'engine',
  'analytics-files',
  'worker-restart',
  'faults-sigterm',
  'faults-worker-kill',
  'queue-mode',
  'oauth',
  'console',
  'webhooks',
  'bursts',
  'voice',
  'handoff',
  'history',
  'auth-jwt',
  'faults-postgres',
].map((name) => `/test/e2e/${name}.e2e-spec.ts`);

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((suffix) => spec.moduleId.endsWith(suffix));
      if (i !== -1) return i;
      // The other e2e files, then the unit specs (short: they fill the end of the run).
      return spec.project.name === 'e2e' ? LONGEST_FIRST.length : LONGEST_FIRST.length + 1;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
