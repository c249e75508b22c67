// The statements the API sends for the history scenario's requests, with the values it binds,
// taken from the built code (dist/) so that docs/PERFORMANCE.md shows the plans of the real SQL.
const HOUR = 3_600_000;

export async function statements({ db, workflowId, triggerId, organizationId }) {
  const { EXECUTION_LIST_STATEMENTS: lists } = await import('../../dist/src/executions/execution-lists.repository.js');
  const { METRICS_STATEMENTS: metrics, summaryValues } = await import('../../dist/src/execution-metrics/execution-metrics.repository.js');
  const { WORKFLOW_LIST_STATEMENTS: workflows, WORKFLOW_BY_ID: byId, WORKFLOW_DEEP_PAGE: deep } = await import('../../dist/src/workflows/workflows.repository.js');
  const { rows: [{ total }] } = await db.query(`SELECT execution_count AS total FROM workflows WHERE id = $1`, [workflowId]);
  const middle = Math.floor(total / 2 / 20) * 20;
  const { rows: [mid] } = await db.query(
    `SELECT (EXTRACT(EPOCH FROM started_at) * 1000000)::bigint::text AS micros, id FROM workflow_executions
      WHERE workflow_id = $1 ORDER BY started_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [workflowId, middle],
  );
  const { rows: [landing] } = await db.query(lists.workflow.skip('all', true).text, [workflowId, middle]);
  const { rows: [{ total: failedTotal }] } = await db.query(lists.trigger.rollupTotal('failed').text, [triggerId]);
  // The trigger's failed list at page 2500 (offset 49,980, past its middle): counted from the oldest end.
  const failedFromEnd = Math.max(0, Number(failedTotal) - 49980 - 20);
  const { rows: [failedLanding] } = await db.query(lists.trigger.skip('failed', false).text, [triggerId, failedFromEnd]);
  const { workflows: workflowTotal } = (await db.query(`SELECT workflow_count AS workflows FROM organizations WHERE id = $1`, [organizationId])).rows[0];
  const now = Date.now();
  const metricsValues = (id, days, granularity) => summaryValues(id, organizationId, { start: new Date(now - days * 86_400_000), end: new Date(now), granularity });
  const weekAgo = new Date(now - 7 * 86_400_000);
  return [
    { title: 'GET /v1/workflows/{id} (and the ownership check of every workflow sub-route)', sql: byId.text, values: [workflowId, organizationId] },
    { title: 'GET /v1/workflows/{id}/executions?limit=20 (page 1; total from workflows.execution_count)', sql: lists.workflow.page('', true).text, values: [workflowId, organizationId, 20, 0] },
    {
      title: `GET /v1/workflows/{id}/executions?limit=20&page=${middle / 20 + 1} (the middle of the list) — 1. the hour the offset lands in, from the rollups`,
      sql: lists.workflow.skip('all', true).text,
      values: [workflowId, middle],
    },
    {
      title: '… 2. the page, below that hour\'s end',
      sql: lists.workflow.page('h', true).text,
      values: [workflowId, organizationId, new Date(landing.hour.getTime() + HOUR), 20, middle - Number(landing.before)],
    },
    {
      title: 'GET /v1/triggers/{id}/executions?status=failed&page=2500 — 1. the total of a status, from the rollups (a trigger has no counter of it)',
      sql: lists.trigger.rollupTotal('failed').text,
      values: [triggerId],
    },
    {
      title: '… 2. past the middle: the landing hour counted from the oldest end',
      sql: lists.trigger.skip('failed', false).text,
      values: [triggerId, failedFromEnd],
    },
    {
      title: '… 3. the page, ascending from that hour\'s start (then reversed)',
      sql: lists.trigger.page('sg', false).text,
      values: [triggerId, organizationId, 'failed', failedLanding.hour, 20, failedFromEnd - Number(failedLanding.before)],
    },
    { title: 'GET /v1/workflows/{id}/executions?limit=20&after=<cursor at the middle>', sql: lists.workflow.page('k', true).text, values: [workflowId, organizationId, mid.micros, mid.id, 20, 0] },
    { title: 'GET /v1/workflows/{id}/executions?status=failed&limit=20 (total from failure_count)', sql: lists.workflow.page('s', true).text, values: [workflowId, organizationId, 'failed', 20, 0] },
    {
      title: 'GET /v1/workflows/{id}/executions?status=success&start_date=<7 days ago> — page',
      sql: lists.workflow.page('sa', true).text,
      values: [workflowId, organizationId, 'success', weekAgo, 20, 0],
    },
    { title: '… and its total', sql: lists.workflow.count('sa').text, values: [workflowId, organizationId, 'success', weekAgo] },
    { title: 'GET /v1/triggers/{id}/executions?limit=20 (total from triggers.execution_count)', sql: lists.trigger.page('', true).text, values: [triggerId, organizationId, 20, 0] },
    { title: 'GET /v1/workflows/{id}/metrics (30 days, day)', sql: metrics.workflow.text, values: metricsValues(workflowId, 30, 'day') },
    { title: 'GET /v1/workflows/{id}/metrics (365 days, month)', sql: metrics.workflow.text, values: metricsValues(workflowId, 365, 'month') },
    { title: 'GET /v1/triggers/{id}/metrics (30 days, day)', sql: metrics.trigger.text, values: metricsValues(triggerId, 30, 'day') },
    { title: 'GET /v1/workflows?limit=20 (total from organizations.workflow_count)', sql: workflows.get('').page.text, values: [organizationId, 20, 0] },
    { title: 'GET /v1/workflows?limit=20&page=500 — 1. the total (organizations.workflow_count), 2. the ids by index-only scan, then 20 rows', sql: deep.desc.text, values: [organizationId, 20, 9980] },
    {
      title: `GET /v1/workflows?limit=20&page=${Math.floor(workflowTotal / 2 / 20)} (the middle: the deepest page by \`page\`)`,
      sql: deep.desc.text,
      values: [organizationId, 20, (Math.floor(workflowTotal / 2 / 20) - 1) * 20],
    },
    { title: 'GET /v1/workflows?search=refund&limit=20 (page and total)', sql: workflows.get('q').page.text, values: [organizationId, '%refund%', 20, 0] },
    { title: 'GET /v1/workflows?search=Workflow 0123&limit=20', sql: workflows.get('q').page.text, values: [organizationId, '%Workflow 0123%', 20, 0] },
    {
      title: 'GET /v1/workflows?search=refund&limit=20 with its total already counted at the organization\'s workflows version (the page alone)',
      sql: workflows.get('q').pageOnly.text,
      values: [organizationId, '%refund%', 20, 0],
    },
    { title: '… the same for a rare term (search=Workflow 0123)', sql: workflows.get('q').pageOnly.text, values: [organizationId, '%Workflow 0123%', 20, 0] },
    { title: 'GET /v1/workflows?status=active&limit=20 (page and total, the first time at a version)', sql: workflows.get('s').page.text, values: [organizationId, 'active', 20, 0] },
  ].map((s) => ({ ...s, hour: HOUR }));
}
