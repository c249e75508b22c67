// EXPLAIN (ANALYZE, BUFFERS) of the analytics statements (src/analytics/*.repository.ts, listed in src/analytics/analytics-statements.ts, and the workflow_metrics export)
// over an already seeded history database (bench/explain-history.mjs with KEEP=1, or the bench's):
//   npm run build && node bench/explain-analytics.mjs <database-name> [summary]
// Only 127.0.0.1; the statements are read-only.
import pg from 'pg';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const name = process.argv[2];
if (!name) throw new Error('usage: node bench/explain-analytics.mjs <database-name> [statement-name-filter]');
const only = process.argv[3];
const { ANALYTICS_STATEMENTS: S } = await import('../dist/src/analytics/analytics-statements.js');
const { journeySplit } = await import('../dist/src/analytics/analytics-sql.js');
const { splitDays } = await import('../dist/src/analytics/performance.repository.js');
const { workflowCountsValues } = await import('../dist/src/analytics/workflow-analytics.repository.js');
const { hourSplit } = await import('../dist/src/common/period-split.js');
const { EXPORT_DATASETS } = await import('../dist/src/analytics/files/export-datasets.js');
const { engagementDayPlan, planValues, ...E } = await import('../dist/src/analytics/engagement-days.js');
const db = new pg.Client({ connectionString: `${server}/${name}` });
await db.connect();
await db.query('SET jit = off');
const { rows: [h] } = await db.query(`SELECT w.id AS workflow_id, w.organization_id, max(e.started_at) AS last
                                        FROM workflows w JOIN workflow_executions e ON e.workflow_id = w.id WHERE w.name = 'history' GROUP BY w.id`);
const end = new Date(h.last);
const days = (n) => new Date(end.getTime() - n * 86_400_000);
const mid = (n) => new Date(end.getTime() - (n / 2) * 86_400_000);
const org = h.organization_id;
const wf = h.workflow_id;
/** The values a JourneySplit gives a statement (splitValues of src/analytics/analytics-sql.ts). */
const daySplit = (a, b) => {
  const s = journeySplit(a, b);
  return [...s.ranges.flatMap((r) => [r.from, r.to, r.sign]), s.daysFrom, s.daysTo];
};
const cases = [
  ...[30, 365].map((n) => {
    const [a, b] = [days(n), end];
    const first = new Date(Math.ceil(a.getTime() / 3_600_000) * 3_600_000);
    const last = new Date(Math.floor(b.getTime() / 3_600_000) * 3_600_000);
    const split = { rawFrom: a, rawTo: first, rawFrom2: last, rawTo2: b, hoursFrom: first, hoursTo: last };
    return [`WORKFLOW_COUNTS ${n} days, day buckets, Europe/Berlin (hour rollups)`, S.WORKFLOW_COUNTS, workflowCountsValues(org, wf, split, 'Europe/Berlin', 'day', mid(n))];
  }),
  // UTC (the default zone): the whole UTC days from the day rows, the day of the halves' split and the partial days' hours from the hour rows.
  ...[[30, 'day'], [365, 'month']].map(([n, granularity]) => [
    `WORKFLOW_COUNTS ${n} days, ${granularity} buckets, UTC (day rows + hour rollups)`, S.WORKFLOW_COUNTS,
    workflowCountsValues(org, wf, hourSplit(days(n), end), 'UTC', granularity, new Date(Math.floor(mid(n).getTime() / 3_600_000) * 3_600_000)),
  ]),
  ['WORKFLOW_COUNTS 30 days, day buckets, Asia/Kolkata (raw rows)', S.WORKFLOW_COUNTS,
    workflowCountsValues(org, wf, { rawFrom: days(30), rawTo: days(30), rawFrom2: days(30), rawTo2: end, hoursFrom: days(30), hoursTo: days(30) }, 'Asia/Kolkata', 'day', mid(30))],
  ['WORKFLOW_CUSTOMERS 30 days', S.WORKFLOW_CUSTOMERS, [org, wf, days(30), end, 'UTC', 'day']],
  ['WORKFLOW_CUSTOMERS 365 days', S.WORKFLOW_CUSTOMERS, [org, wf, days(365), end, 'UTC', 'day']],
  ['WORKFLOW_SATISFACTION 30 days (answer day rollup + at most half a day of answers at each end)', S.WORKFLOW_SATISFACTION, [org, wf, ...daySplit(days(30), end)]],
  ['WORKFLOW_SATISFACTION 365 days (answer day rollup + at most half a day of answers at each end)', S.WORKFLOW_SATISFACTION, [org, wf, ...daySplit(days(365), end)]],
  ['WORKFLOW_GROUPS 30 days', S.WORKFLOW_GROUPS, [org, wf, days(30), end]],
  ...[['UTC', true], ['Europe/Berlin', true], ['Asia/Kolkata', false]].flatMap(([zone, hourly]) => {
    // As AnalyticsService.performance: the whole UTC days from the rollups, the partial ones raw.
    const [a, b] = [days(365), end];
    const { daysFrom, daysTo, monthsFrom, monthsTo } = splitDays(a, b);
    const values = [org, wf, a, b, daysFrom, daysTo];
    return [
      ...(zone === 'UTC' ? [['PERFORMANCE_PERCENTILES 365 days (month and day rollups + partial days)', S.PERFORMANCE_PERCENTILES, [...values, monthsFrom, monthsTo]]] : []),
      [`PERFORMANCE_COUNTS 365 days, ${zone} (${hourly ? 'peak hour from the hourly rollups' : 'peak hour from the executions'})`, S.PERFORMANCE_COUNTS, [...values, zone, hourly]],
    ];
  }),
  ['NODES 365 days (node rollups)', S.NODES, [org, wf, ...daySplit(days(365), end)]],
  // Engagement (EngagementRepository.engagement): the sessions' sums day by day, the stored day sets and the raw
  // parts' sets, the answers, and the new customers' own figures (ENGAGEMENT with segment new).
  ...(() => {
    const [a, b] = [days(30), end];
    const middle = new Date(Math.floor((a.getTime() + (b.getTime() - a.getTime()) / 2) / 3_600_000) * 3_600_000);
    const bounds = planValues(engagementDayPlan(a, b, middle));
    return [
      ['ENGAGEMENT_DAY_FACTS 30 days', E.DAY_FACTS, [org, a, b, null, middle]],
      ['ENGAGEMENT_DAY_SETS 30 days (stored sets of the whole days, raw parts)', E.DAY_SETS, [org, bounds.daysFrom, bounds.daysTo, null, bounds.froms, bounds.tos]],
      ['ENGAGEMENT_ANSWERS 30 days', S.ENGAGEMENT_ANSWERS, [org, a, b, null, 'all', middle]],
      ['ENGAGEMENT 30 days, segment new', S.ENGAGEMENT, [org, a, b, null, 'new', middle]],
    ];
  })(),
  ['TOTAL_CUSTOMERS 30 days', S.TOTAL_CUSTOMERS, [org, days(30), end, null, 'all']],
  ['TOTAL_CUSTOMERS 30 days, channel whatsapp', S.TOTAL_CUSTOMERS, [org, days(30), end, 'whatsapp', 'all']],
  ['TOTAL_CUSTOMERS', S.TOTAL_CUSTOMERS, [org, days(30), end, null, 'all']],
  ['JOURNEY_OUTCOMES 30 days (outcome rollups)', S.JOURNEY_OUTCOMES, [org, wf, ...daySplit(days(30), end)]],
  ['JOURNEY_NODES 30 days (node rollups)', S.JOURNEY_NODES, [org, wf, ...daySplit(days(30), end)]],
  ['TOP_WORKFLOW 30 days (outcome rollups)', S.TOP_WORKFLOW, [org, ...daySplit(days(30), end)]],
  ['REALTIME', S.REALTIME, [org, null, null, new Date(end.getTime() - 3_600_000)]],
  // An export's statement, planned as the file generator plans it (indexReadsOnly: enable_seqscan off).
  ...[null, ['whatsapp']].map((channels) => [
    `EXPORT workflow_metrics 365 days${channels ? `, channels ${channels}` : ''} (rollup hours, executions and answers once per workflow)`,
    { text: EXPORT_DATASETS.workflow_metrics.sql }, [org, days(365), end, null, channels], EXPORT_DATASETS.workflow_metrics.indexReadsOnly,
  ]),
];
for (const [title, statement, values, indexReadsOnly] of cases) {
  if (only && !title.includes(only)) continue;
  await db.query(`SET enable_seqscan = ${indexReadsOnly ? 'off' : 'on'}`);
  const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, values);
  const plan = rows.map((r) => r['QUERY PLAN']);
  console.log(`### ${title}\n\n${plan.filter((l) => /Execution Time|Planning Time/.test(l)).join('\n')}\n\n\`\`\`\n${plan.join('\n')}\n\`\`\`\n`);
}
await db.end();
