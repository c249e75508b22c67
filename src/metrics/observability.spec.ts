import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';
import { collectDefaultMetrics, register, Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
// The whole module graph of both roles (API and worker run the same modules, the worker adding its
// processors): importing it registers every metric the service defines at module level.
import '../app.module.js';
import { metricNamesOf } from './promql-names.js';

const DIR = 'docker/observability';

/** Names a scrape exposes: the default registry's metrics, with a histogram's and a summary's series suffixes, and the process metrics. */
function exportedNames(): Set<string> {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const names = new Set<string>();
  for (const metric of [...register.getMetricsAsArray(), ...defaults.getMetricsAsArray()]) {
    const { name } = metric as unknown as { name: string };
    names.add(name);
    for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

function ruleExpressions(): string[] {
  const file = load(readFileSync(join(DIR, 'alerts.yml'), 'utf8'), { schema: CORE_SCHEMA }) as { groups: { rules: { expr: string }[] }[] };
  return file.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana/dashboards/workflow-automation.json'), 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

describe('docker/observability', () => {
  const exported = exportedNames();
  // Prometheus' own series of every target.
  const allowed = new Set([...exported, 'up']);

  it('reads metric names out of PromQL (functions, aggregations, labels, ranges and keywords are not names)', () => {
    expect(metricNamesOf('sum by (queue, state) (rate(foo_total{class!="2xx", a=~"b|c"}[5m] offset 1m)) / ignoring(x) bar > 0 and on(y) baz{}')).toEqual(['foo_total', 'bar', 'baz']);
    expect(metricNamesOf('histogram_quantile(0.95, sum by (le) (rate(x_seconds_bucket[$__rate_interval])))')).toEqual(['x_seconds_bucket']);
    expect(metricNamesOf('deriv(max by (queue) (q{state="waiting"})[15m:1m]) > 1e3')).toEqual(['q']);
  });

  it('queries only metrics the service exports, in the alert rules and in the dashboard', () => {
    const rules = ruleExpressions();
    const panels = dashboardExpressions();
    expect(rules.length).toBeGreaterThan(5);
    expect(panels.length).toBeGreaterThan(10);
    const unknown = [...rules, ...panels].flatMap((expr) => metricNamesOf(expr).filter((name) => !allowed.has(name)).map((name) => `${name} (in ${expr.trim()})`));
    expect(unknown).toEqual([]);
    // The names checked are the service's: its queue, execution, outbox and delivery metrics among them.
    for (const name of ['bull_queue_jobs', 'bull_queue_oldest_waiting_age_seconds', 'workflow_executions_finished_total', 'workflow_execution_duration_seconds', 'outbox_lag_seconds', 'rollup_backlog_rows', 'channel_send_backlog', 'channel_provider_sends_total', 'webhook_delivery_responses_total', 'ai_response_duration_seconds', 'http_request_duration_seconds']) {
      expect(exported, name).toContain(name);
    }
  });

  it('alerts on a growing queue, the outbox lag, delivery failures, 5xx and a worker not scraped', () => {
    const names = new Set(ruleExpressions().flatMap(metricNamesOf));
    for (const name of ['bull_queue_jobs', 'outbox_lag_seconds', 'webhook_delivery_responses_total', 'http_request_duration_seconds_count', 'up']) expect(names, name).toContain(name);
    expect(ruleExpressions().some((e) => /up\{job="worker"\} == 0/.test(e))).toBe(true);
  });

  describe('promtool', () => {
    const promtool = spawnSync('promtool', ['--version']).status === 0;
    const scratch = mkdtempSync(join(tmpdir(), 'observability-'));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it.skipIf(!promtool)('accepts the alert rules (promtool check rules; skipped when promtool is not installed: Debian package prometheus)', () => {
      expect(() => execFileSync('promtool', ['check', 'rules', join(DIR, 'alerts.yml')], { stdio: 'pipe' })).not.toThrow();
    });

    it.skipIf(!promtool)('accepts the scrape configuration (promtool check config, the token file in place)', () => {
      // The token file is the compose secret's mount point; promtool wants it to exist.
      const token = join(scratch, 'metrics_token');
      writeFileSync(token, 'x'.repeat(32));
      const config = readFileSync(join(DIR, 'prometheus.yml'), 'utf8');
      expect(config).toContain('credentials_file: /run/secrets/metrics_token');
      writeFileSync(join(scratch, 'prometheus.yml'), config.replaceAll('/run/secrets/metrics_token', token));
      copyFileSync(join(DIR, 'alerts.yml'), join(scratch, 'alerts.yml'));
      const run = spawnSync('promtool', ['check', 'config', join(scratch, 'prometheus.yml')], { encoding: 'utf8' });
      expect(run.stdout + run.stderr).toContain('SUCCESS');
      expect(run.status).toBe(0);
    });
  });
});
