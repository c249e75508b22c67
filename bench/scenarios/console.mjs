// The console's pages against the seeded year of `history` (bench/lib/history-seed.mjs: 100,000 workflows, one
// workflow with 1,000,000 executions, 50,000 customers), in Debian's Chromium (playwright-core, as the console's
// e2e test). A user signs in once through the consent page; then each page is loaded BENCH_CONSOLE_LOADS times
// (default 5) with page.goto, as a bookmark or a reload would (the access token lives in memory only, so every
// load also refreshes it: index.html, the hashed assets from the cache, the token, then the page's API calls),
// and timed until it is rendered: its heading, no "Loading…" left in it, no error shown, and its own content
// (rows, the graph, the timeline, a drawn chart). Target: every load of every page within 1 s.
// Not part of the default run (it seeds the whole history): BENCH_SCENARIOS=console.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { chromium } from 'playwright-core';
import { ROOT } from '../lib/context.mjs';
import { historyScaleFromEnv, seedHistory } from '../lib/history-seed.mjs';
import { round } from '../lib/load.mjs';
import { freePort } from '../lib/processes.mjs';
import { firstSketchPass } from '../lib/sketches.mjs';

const CHROMIUM = '/usr/bin/chromium';
const PAGE_MAX_MS = 1000;
const DAY = 86_400_000;

/** `npm run cli -- user:create` of the build under test, against the bench's database. */
async function createUser(ctx, organizationId, email, password) {
  const cli = join(ctx.build.root, 'dist', 'src', 'cli.js');
  const child = spawn(process.execPath, [cli, 'user:create', '--org', organizationId, '--email', email, '--password', password], {
    cwd: ctx.build.root,
    env: ctx.childEnv({ REDIS_URL: ctx.config.redisUrl, REDIS_KEY_PREFIX: ctx.redisKeyPrefix, LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`user:create exited ${code}: ${output.slice(0, 500)}`);
}

const day = (ms) => new Date(ms).toISOString().slice(0, 10);

export default {
  name: 'console',
  description: 'The console (/console) in Chromium over the seeded year: every page loaded and rendered within 1 s',

  async run(ctx) {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install -y chromium`);
    if (!existsSync(join(ROOT, 'dist', 'console', 'index.html')) && !existsSync(join(ctx.build.root, 'dist', 'console', 'index.html'))) {
      throw new Error('The console is not built: run npm run build');
    }
    const scale = historyScaleFromEnv();
    const loads = Number(process.env.BENCH_CONSOLE_LOADS ?? '5');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await ctx.startApp({ role: 'api', port, env: { PUBLIC_BASE_URL: base } });
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    let browser;
    try {
      const seeded = await seedHistory(db, { scale, log: (line) => console.log(line) });
      await db.query('SELECT rollups_fold(100000000)');
      // What a worker's first pass leaves after a year of service: every closed day and month of the year sketched.
      const sketched = await firstSketchPass(ctx);
      console.log(`  sketches: ${sketched.days} days and ${sketched.months} months folded by the workers' first pass in ${round(sketched.ms / 1000, 2)} s`);
      const { organizationId, workflowId } = seeded;
      const {
        rows: [sample],
      } = await db.query(
        `SELECT e.id AS execution_id, c.external_id AS customer
           FROM workflow_executions e JOIN customers c ON c.id = e.customer_id
          WHERE e.workflow_id = $1 AND e.status = 'success' ORDER BY e.id DESC LIMIT 1`,
        [workflowId],
      );
      const email = `bench-${Date.now()}@example.test`;
      const password = 'a long enough bench password';
      await createUser(ctx, organizationId, email, password);

      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
      const page = await browser.newPage();
      const failures = [];
      page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
      // Each API answer's time (request sent to last byte), to name the slowest call of a page's slowest load.
      let calls = [];
      page.on('requestfinished', (request) => {
        const url = new URL(request.url());
        if (!url.pathname.startsWith('/v1/') && !url.pathname.startsWith('/oauth/token')) return;
        const timing = request.timing();
        calls.push({ path: url.pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}'), ms: timing.responseEnd - timing.requestStart });
      });
      await page.goto(`${base}/console/`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/oauth\/authorize\?/);
      await page.locator('#email').fill(email);
      await page.locator('#password').fill(password);
      await page.locator('button[value=approve]').click();
      await page.waitForURL(new RegExp(`^${base}/console/`));
      // Signed in once the code is exchanged (a navigation before that would abort it).
      await page.getByRole('heading', { name: 'Workflows' }).waitFor();

      const now = Date.now();
      const pages = [
        { name: 'workflows (100,000)', path: '/console/', content: 'table tbody tr a' },
        { name: 'workflow: graph and executions (1,000,000)', path: `/console/workflows/${workflowId}`, content: '.graph svg' },
        { name: 'execution: timeline', path: `/console/workflows/${workflowId}/executions/${sample.execution_id}`, content: 'svg.timeline' },
        { name: 'customers (50,000)', path: '/console/customers', content: 'table tbody tr a' },
        { name: 'conversation', path: `/console/customers/${encodeURIComponent(sample.customer)}`, content: '[data-handoff]' },
        { name: 'webhooks', path: '/console/webhooks', content: 'h1' },
        {
          name: 'analytics: 30 days',
          path: `/console/analytics?workflow=${workflowId}&start=${day(now - 30 * DAY)}&end=${day(now)}&tz=UTC`,
          content: '.chart[data-drawn=true] canvas',
        },
        {
          name: 'analytics: 365 days',
          path: `/console/analytics?workflow=${workflowId}&start=${day(now - 364 * DAY)}&end=${day(now)}&tz=UTC`,
          content: '.chart[data-drawn=true] canvas',
        },
        { name: 'engagement', path: '/console/analytics/engagement', content: 'h1' },
        { name: 'realtime', path: '/console/analytics/realtime', content: 'h1' },
        { name: 'channel accounts', path: '/console/channels', content: 'h1' },
      ];
      const rows = [];
      for (const p of pages) {
        const times = [];
        let errors = 0;
        let slowest = { ms: -1, calls: [] };
        for (let i = 0; i < loads; i++) {
          calls = [];
          const started = performance.now();
          try {
            await page.goto(`${base}${p.path}`);
            await page.locator('#main h1').first().waitFor({ timeout: 10_000 });
            await page.locator(`#main ${p.content}`).first().waitFor({ timeout: 10_000 });
            await page.waitForFunction(() => !document.querySelector('#main')?.textContent?.includes('Loading…'), undefined, { timeout: 10_000 });
            times.push(performance.now() - started);
            if (times.at(-1) > slowest.ms) slowest = { ms: times.at(-1), calls: [...calls] };
            if ((await page.locator('#main .error[role=alert]').count()) > 0) {
              errors += 1;
              failures.push(`${p.name}: ${await page.locator('#main .error[role=alert]').first().innerText()}`);
            }
          } catch (error) {
            errors += 1;
            failures.push(`${p.name}: ${error.message.split('\n')[0]}: ${(await page.locator('#main').innerText().catch(() => '')).slice(0, 300).replace(/\s+/g, ' ')}`);
          }
        }
        const sorted = [...times].sort((a, b) => a - b);
        const at = (q) => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))], 1) : null);
        rows.push({
          name: `${p.name}: load to rendered (slowest of ${loads})`,
          measurement: {
            requests_per_s: times.length ? round((1000 * times.length) / times.reduce((a, t) => a + t, 0), 2) : 0,
            requests_total: loads,
            p50_ms: at(0.5),
            p95_ms: sorted.length ? round(sorted.at(-1), 1) : null,
            p99_ms: sorted.length ? round(sorted.at(-1), 1) : null,
            errors,
            non_2xx: 0,
            duration_s: round(times.reduce((s, t) => s + t, 0) / 1000, 3),
          },
          max_p99_ms: PAGE_MAX_MS,
          note:
            `loads ${JSON.stringify(times.map((t) => Math.round(t)))} ms; the slowest's API calls: ` +
            slowest.calls.sort((a, b) => b.ms - a.ms).slice(0, 3).map((c) => `${c.path} ${Math.round(c.ms)} ms`).join(', '),
        });
      }
      if (failures.length > 0) console.log(`console: ${failures.length} problems:\n  ${failures.slice(0, 20).join('\n  ')}`);
      rows.push({
        name: "the workers' first sketch pass over the seeded year (before the loads)",
        measurement: { requests_per_s: 0, requests_total: 1, p50_ms: null, p95_ms: null, p99_ms: null, errors: 0, non_2xx: 0, duration_s: round(sketched.ms / 1000, 3) },
        note: `${sketched.days} day and ${sketched.months} month sketches folded (workflows and triggers)`,
      });
      return rows;
    } finally {
      await browser?.close();
      await db.end();
    }
  },
};
