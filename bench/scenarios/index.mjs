// Every benchmark scenario, in the order they run. A scenario is one module exporting
//   { name, description, async run(ctx) }  ->  rows: [{ name, measurement, baseline?, target_ratio? }]
// where ctx is a BenchContext (bench/lib/context.mjs) with its own database, Redis prefix and API key,
// `baseline` names an entry of bench/lib/baselines.mjs and the row passes when
// requests/s >= target_ratio x the baseline's requests/s and no request failed or answered non-2xx.
// A row may instead carry absolute targets (min_per_s, max_p99_ms; see lib/report.mjs).
import channels from './channels.mjs';
import consolePages from './console.mjs';
import deliveries from './deliveries.mjs';
import executions from './executions.mjs';
import executionsWebhooks from './executions-webhooks.mjs';
import history, { analytics } from './history.mjs';
import retention from './retention.mjs';
import voice from './voice.mjs';
import workflowsRead from './workflows-read.mjs';

// channels after executions: it compares its conversations/s with the executions/s of the same invocation.
export const SCENARIOS = [workflowsRead, executions, channels, executionsWebhooks, history, deliveries, voice];

/**
 * Scenarios run only when named in BENCH_SCENARIOS: `analytics` seeds the same year as `history`
 * and measures only the analytics rows, which a full run already measures within `history`;
 * `retention` seeds that year too and prunes it to 30 days (EXECUTION_RETENTION); `console` seeds it and loads
 * the console's pages in Chromium.
 */
export const NAMED_ONLY = [analytics, retention, consolePages];
