import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { AxeBuilder } from '@axe-core/playwright';
import openapiTS, { astToString } from 'openapi-typescript';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { CONSOLE_CLIENT_ID } from '../../src/auth/oauth/console-client.js';
import { UsersService } from '../../src/auth/users/users.service.js';
import { consoleDistDir } from '../../src/console/console.middleware.js';
import { insertWorkflowExecution } from '../factories/executions.js';
import { createTrigger } from '../factories/triggers.js';
import { startFakeAiProvider, type FakeAiProvider } from '../utils/fake-ai-provider.js';
import { startFakeMeta, type FakeMeta } from '../utils/fake-meta.js';
import { whatsappMessagesPayload, whatsappStatusesPayload } from '../utils/meta-payloads.js';
import { metaSignature } from '../utils/meta-signing.js';
import { HttpsReceiver, selfSignedCertificate } from '../utils/https-receiver.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

/**
 * The console at /console in Debian's Chromium (as the API explorer's test), against the real app:
 * its files and headers, its bundle budget, its types against the served OpenAPI document, and a
 * user's path through it: sign-in on the consent page (PKCE), a workflow's graph, a failed
 * execution retried, a conversation, a webhook delivery resent, analytics matching the API. Every
 * page is checked with axe (no serious or critical violation) and saved as a screenshot under
 * test-results/console/. A CSP violation on any page fails the test that loaded it.
 */

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(process.cwd(), 'test-results', 'console');
const TYPES_FILE = join(process.cwd(), 'console', 'src', 'api-types.d.ts');
/** The first page's JavaScript, gzipped. */
const FIRST_PAGE_BUDGET = 150 * 1024;

vi.setConfig({ testTimeout: 180_000 });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('console', () => {
  let t: TestApp;
  let base: string;
  let org: TestOrganization;
  let db: DataSource;
  let ai: FakeAiProvider;
  let meta: FakeMeta;
  let tls: ReturnType<typeof selfSignedCertificate>;
  let receiver: HttpsReceiver;
  let browser: Browser;
  const email = `console-${process.pid}-${Date.now()}@example.test`;
  const password = 'a long enough password';
  /** CSP violations and page errors seen by the current page. */
  let problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(consoleDistDir(), 'index.html'))) throw new Error('The console is not built: run npm run build first');
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`);
    mkdirSync(SHOTS, { recursive: true });
    ai = await startFakeAiProvider({ content: 'Refunds take 14 days.' });
    meta = await startFakeMeta();
    tls = selfSignedCertificate();
    receiver = new HttpsReceiver(tls);
    await receiver.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({
      RATE_LIMITS_ENABLED: 'false',
      PUBLIC_BASE_URL: base,
      REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:console`,
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'test-key',
      NODE_RETRY_ATTEMPTS: '2',
      NODE_RETRY_BASE_DELAY_MS: '10',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      WEBHOOK_CA_FILE: tls.certFile,
      WHATSAPP_API_URL: meta.url,
    });
    await t.app.listen(port, '127.0.0.1');
    db = t.app.get(DataSource);
    org = await createOrganization(t);
    await t.app.get(UsersService).create(org.id, email, password);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await ai?.close();
    await meta?.close();
    await receiver?.stop();
    tls?.cleanup();
  });

  describe('files, headers and budget', () => {
    it('serves index.html revalidated and hashed assets immutable, each under a CSP without unsafe-inline', async () => {
      const index = await t.http.get('/console/');
      expect(index.status).toBe(200);
      expect(index.headers['content-type']).toMatch(/text\/html/);
      expect(index.headers['cache-control']).toBe('no-cache');
      const csp = index.headers['content-security-policy'] as string;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
      expect(index.headers['x-content-type-options']).toBe('nosniff');
      // A page of the application (a deep link) is the same document.
      const deep = await t.http.get('/console/workflows/123');
      expect(deep.status).toBe(200);
      expect(deep.text).toBe(index.text);
      expect((await t.http.get('/console')).headers.location).toBe('/console/');
      const assets = [...index.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) {
        const res = await t.http.get(asset);
        expect(res.status, asset).toBe(200);
        expect(res.headers['cache-control'], asset).toBe('public, max-age=31536000, immutable');
        expect(res.headers['content-security-policy'], asset).toBe(csp);
      }
      // No inline script or style for the CSP to refuse.
      expect(index.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(index.text).not.toMatch(/<style|style=/);
      const missing = await t.http.get('/console/assets/missing-0000.js');
      expect(missing.status).toBe(404);
      expect(missing.headers['cache-control']).toBe('no-store');
      expect((await t.http.post('/console/').send({})).status).toBe(405);
    });

    it(`keeps the first page's JavaScript under ${FIRST_PAGE_BUDGET / 1024} KB gzipped, uPlot out of it`, () => {
      const dir = consoleDistDir();
      const html = readFileSync(join(dir, 'index.html'), 'utf8');
      const entry = [...html.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\/console\/([^"]+\.js)"/g)].map((m) => m[1] as string);
      expect(entry.length).toBeGreaterThanOrEqual(1);
      const sizes = entry.map((file) => gzipSync(readFileSync(join(dir, file)), { level: 9 }).length);
      const total = sizes.reduce((a, b) => a + b, 0);
      expect(total).toBeLessThan(FIRST_PAGE_BUDGET);
      // uPlot is a chunk of its own, fetched by the analytics page only.
      const chunks = readdirSync(join(dir, 'assets'));
      expect(chunks.some((f) => /^uPlot.*\.js$/.test(f))).toBe(true);
      expect(entry.some((f) => /uPlot/.test(f))).toBe(false);
    });

    it('was typed against the OpenAPI document this build serves (regenerate: UPDATE_CONSOLE_TYPES=1)', async () => {
      const served = (await t.http.get('/openapi.json').expect(200)).body as Record<string, unknown>;
      const generated = astToString(await openapiTS(served as never));
      const committed = readFileSync(TYPES_FILE, 'utf8');
      if (process.env.UPDATE_CONSOLE_TYPES === '1' && generated !== committed) writeFileSync(TYPES_FILE, generated);
      else expect(generated === committed, 'console/src/api-types.d.ts differs from the served /openapi.json: UPDATE_CONSOLE_TYPES=1 npx vitest run --project e2e test/e2e/console.e2e-spec.ts, then npm run build').toBe(true);
      // The console names the client id the migration stores.
      expect(readFileSync(join(process.cwd(), 'console', 'src', 'auth.ts'), 'utf8')).toContain(CONSOLE_CLIENT_ID);
    });
  });

  describe("the console's OAuth client", () => {
    const challenge = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

    /** The code flow over HTTP, as the console runs it: consent page, sign-in, code, tokens. */
    async function signInOverHttp(user: { email: string; password: string }, redirectUri = `${base}/console/`) {
      const verifier = randomBytes(32).toString('base64url');
      const params = new URLSearchParams({ response_type: 'code', client_id: CONSOLE_CLIENT_ID, redirect_uri: redirectUri, scope: 'workflows:read', state: 's1', code_challenge: challenge(verifier), code_challenge_method: 'S256' });
      const pageRes = await fetch(`${base}/oauth/authorize?${params}`, { redirect: 'manual' });
      const html = await pageRes.text();
      if (pageRes.status !== 200) return { status: pageRes.status, html };
      const hidden = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], (m[2] as string).replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))]));
      const posted = await fetch(`${base}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: pageRes.headers.get('set-cookie')?.split(';')[0] ?? '' },
        body: new URLSearchParams({ ...hidden, email: user.email, password: user.password, decision: 'approve' }),
      });
      if (posted.status !== 302) return { status: posted.status, html: await posted.text() };
      const location = new URL(posted.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
      const token = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: CONSOLE_CLIENT_ID, code: location.searchParams.get('code') as string, redirect_uri: redirectUri, code_verifier: verifier }),
      });
      return { status: token.status, body: (await token.json()) as { access_token: string; refresh_token: string; scope: string } };
    }

    it("signs in a user of any organization, the tokens scoped to the user's organization", async () => {
      const other = await createOrganization(t);
      const otherUser = { email: `other-${process.pid}-${Date.now()}@example.test`, password: 'another long password' };
      await t.app.get(UsersService).create(other.id, otherUser.email, otherUser.password);
      const mine = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({ name: `Mine ${Date.now()}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'a', type: 'message', content: 'x' }] } });
      expect(mine.status).toBe(201);
      for (const [user, organization] of [[{ email, password }, org], [otherUser, other]] as const) {
        const signed = await signInOverHttp(user);
        expect(signed.status).toBe(200);
        const auth = { Authorization: `Bearer ${(signed as { body: { access_token: string } }).body.access_token}` };
        expect((await t.http.get('/v1/me').set(auth)).body.data).toMatchObject({ organization_id: organization.id, credential_id: CONSOLE_CLIENT_ID, scopes: ['workflows:read'] });
        const seen = (await t.http.get(`/v1/workflows/${mine.body.data.id}`).set(auth)).status;
        expect(seen).toBe(organization === org ? 200 : 404);
      }
    });

    it('redirects to <PUBLIC_BASE_URL>/console/ only, and is no organization’s to list or delete', async () => {
      for (const uri of [`${base}/console/x`, 'http://127.0.0.2:9/console/', `${base}/console`]) {
        const answer = await signInOverHttp({ email, password }, uri);
        expect(answer.status, uri).toBe(400);
      }
      const listed = await t.http.get('/v1/oauth/clients?limit=100').set(org.auth());
      expect(listed.status).toBe(200);
      expect((listed.body.data as { client_id: string }[]).map((c) => c.client_id)).not.toContain(CONSOLE_CLIENT_ID);
      expect((await t.http.delete(`/v1/oauth/clients/${CONSOLE_CLIENT_ID}`).set(org.auth())).status).toBe(404);
      // Public: it cannot introspect.
      const introspect = await t.http.post('/oauth/introspect').type('form').send({ client_id: CONSOLE_CLIENT_ID, token: 'x' });
      expect(introspect.status).toBe(401);
      expect(introspect.body.error).toBe('invalid_client');
      // A code needs PKCE.
      const noPkce = await fetch(`${base}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: CONSOLE_CLIENT_ID, redirect_uri: `${base}/console/`, state: 's' })}`, { redirect: 'manual' });
      expect(noPkce.status).toBe(302);
      expect(new URL(noPkce.headers.get('location') as string).searchParams.get('error')).toBe('invalid_request');
    });
  });

  describe('in Chromium', () => {
    let page: Page;
    let workflowId: string;
    let failedId: string;
    let customerId: string;
    let analyticsWorkflowId: string;
    let webhookId: string;
    let formWorkflowId: string;
    let waitingId: string;
    const bearers = new Set<string>();

    beforeAll(async () => {
      // A workflow answering through the (failing, then answering) AI provider, started by a keyword.
      await t.http.put('/v1/knowledge-bases/refunds').set(org.auth('read_write')).send({ entries: [{ question: 'How can I get a refund?', answer: 'Within 14 days.' }] }).expect(201);
      const created = await t.http
        .post('/v1/workflows')
        .set(org.auth('read_write'))
        .send({
          name: `Refunds ${Date.now()}`,
          channel: 'whatsapp',
          configuration: {
            nodes: [
              { id: 'greet', type: 'message', content: 'Let me check.', next: 'answer' },
              { id: 'answer', type: 'ai_response', knowledge_base: 'refunds', next: 'bye' },
              { id: 'bye', type: 'message', content: 'Anything else?' },
            ],
          },
        });
      expect(created.status).toBe(201);
      workflowId = created.body.data.id;
      await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write')).expect(200);
      const keyword = `refund${process.pid}`;
      await createTrigger(t, org, workflowId, 'message', { keywords: [keyword] });
      ai.status = 503;
      customerId = `+1555${Date.now() % 1_000_000}`;
      const sent = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customerId, message: `${keyword} how can I get a refund?` });
      expect(sent.status).toBe(202);
      failedId = sent.body.data.executions[0].workflow_execution_id;
      await waitFor('the execution to fail', async () => {
        const x = await t.http.get(`/v1/workflows/${workflowId}/executions/${failedId}`).set(org.auth());
        return x.body.data.status === 'failed';
      });
      ai.status = 200;

      // An execution waiting for the customer's answer to a form: running, so it can be cancelled.
      const form = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: `Survey ${Date.now()}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'ask', type: 'message', content: 'One question.', next: 'city' }, { id: 'city', type: 'form', fields: [{ name: 'city', type: 'text', required: true }] }] },
      });
      formWorkflowId = form.body.data.id;
      await t.http.post(`/v1/workflows/${formWorkflowId}/activate`).set(org.auth('read_write')).expect(200);
      await createTrigger(t, org, formWorkflowId, 'message', { keywords: [`survey${process.pid}`] });
      const asked = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: `+1666${Date.now() % 1_000_000}`, message: `survey${process.pid}` });
      waitingId = asked.body.data.executions[0].workflow_execution_id;
      await waitFor('the form to wait', async () => (await db.query('SELECT waiting FROM workflow_executions WHERE id = $1', [waitingId]))[0]?.waiting === true);

      // Analytics: a workflow with executions on three past days (UTC), written as the engine writes them.
      const analytics = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({ name: `Analytics ${Date.now()}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'hi', type: 'message', content: 'Hi' }] } });
      analyticsWorkflowId = analytics.body.data.id;
      const day = (n: number, h: number) => new Date(Date.UTC(2026, 0, n, h)).toISOString();
      const seeded: [number, 'success' | 'failed', number][] = [
        [5, 'success', 120], [5, 'success', 80], [5, 'failed', 300], [5, 'success', 100],
        [6, 'success', 90], [6, 'success', 110],
        [7, 'failed', 400], [7, 'success', 70], [7, 'success', 60],
      ];
      for (const [[d, status, ms], i] of seeded.map((s, i) => [s, i] as const)) {
        await insertWorkflowExecution(db, { organizationId: org.id, workflowId: analyticsWorkflowId, status, startedAt: day(d, 9 + (i % 5)), durationMs: ms, customerRef: `c${i % 4}` });
      }

      // A webhook with one logged delivery (answered 200 by the receiver).
      const hook = await t.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: 'Receiver', url: receiver.url('/console-hook'), events: ['*'] });
      expect(hook.status).toBe(201);
      webhookId = hook.body.data.id;
      await t.http.post(`/v1/webhooks/${webhookId}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.completed' });
      await waitFor('the test delivery', async () => receiver.hitsOf('/console-hook').length >= 1);

      const context = await browser.newContext();
      page = await context.newPage();
      // Loopback only; any other request is aborted, never sent.
      await page.route('**/*', (route) => (/^127\./.test(new URL(route.request().url()).hostname) ? route.continue() : route.abort()));
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('request', (r) => {
        const auth = r.headers().authorization;
        if (auth?.startsWith('Bearer ')) bearers.add(auth.slice(7));
      });
    }, 120_000);

    afterAll(async () => {
      await page?.context().close();
    });

    // What the page showed when a test failed, beside the pages' screenshots.
    afterEach(async (ctx) => {
      if (ctx.task.result?.state === 'fail') await page?.screenshot({ path: join(SHOTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => undefined);
    });

    /** Axe on the page as shown (no serious or critical violation), a screenshot, and no CSP violation so far. */
    async function check(name: string): Promise<void> {
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
      const results = await new AxeBuilder({ page }).analyze();
      const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n: { target: unknown[] }) => n.target.join(' ')).join('; ')})`), name).toEqual([]);
      expect(problems, name).toEqual([]);
    }

    /** Fills in the consent page and allows. */
    async function consent(): Promise<void> {
      await page.waitForURL(/\/oauth\/authorize\?/);
      await page.locator('#email').fill(email);
      await page.locator('#password').fill(password);
      await page.locator('button[value=approve]').click();
      await page.waitForURL(new RegExp(`^${base}/console/`));
    }

    /** Clicks an action's button; when the token lacks its scope, allows changes on the consent page and clicks it again. */
    async function act(button: ReturnType<Page['locator']>, after: () => Promise<void>): Promise<void> {
      await button.click();
      const allow = page.getByRole('button', { name: 'Allow changes' });
      await Promise.race([allow.waitFor({ timeout: 15_000 }), after().catch(() => undefined)]);
      if (await allow.isVisible()) {
        await allow.click();
        await consent();
        await button.click();
      }
      await after();
    }

    it('signs in through the consent page with PKCE; the access token stays in memory', async () => {
      await page.goto(`${base}/console/`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await check('sign-in');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/oauth\/authorize\?/);
      const authorize = new URL(page.url());
      expect(authorize.searchParams.get('client_id')).toBe(CONSOLE_CLIENT_ID);
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // Read scopes only at sign-in.
      expect(authorize.searchParams.get('scope')?.split(' ').every((s) => s.endsWith(':read'))).toBe(true);
      await consent();
      await page.getByRole('heading', { name: 'Workflows' }).waitFor();
      await page.getByRole('link', { name: /^Refunds/ }).waitFor();
      await check('workflows');
      expect(bearers.size).toBeGreaterThan(0);
      const stored = (await page.evaluate('JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + document.cookie')) as string;
      for (const token of bearers) expect(stored).not.toContain(token);
      // The token is the user's, in the user's organization.
      const me = await t.http.get('/v1/me').set({ Authorization: `Bearer ${[...bearers][0]}` });
      expect(me.status).toBe(200);
      expect(me.body.data).toMatchObject({ credential_type: 'oauth', organization_id: org.id, credential_id: CONSOLE_CLIENT_ID });
      // A reload keeps the user signed in: the access token is gone with the page, the refresh token rotates.
      const rotatedBefore = Number((await db.query(`SELECT count(*) AS n FROM oauth_refresh_tokens WHERE client_id = $1 AND user_id = (SELECT id FROM users WHERE email = $2) AND rotated_at IS NOT NULL`, [CONSOLE_CLIENT_ID, email]))[0].n);
      await page.reload();
      await page.getByRole('link', { name: /^Refunds/ }).waitFor();
      await expect(page.getByRole('button', { name: 'Sign in' }).count()).resolves.toBe(0);
      const rotatedAfter = Number((await db.query(`SELECT count(*) AS n FROM oauth_refresh_tokens WHERE client_id = $1 AND user_id = (SELECT id FROM users WHERE email = $2) AND rotated_at IS NOT NULL`, [CONSOLE_CLIENT_ID, email]))[0].n);
      expect(rotatedAfter).toBe(rotatedBefore + 1);
      // The status filter narrows the list.
      await page.getByRole('link', { name: /^Analytics / }).waitFor();
      await page.locator('select[name=status]').selectOption('active');
      await page.getByRole('link', { name: /^Analytics / }).waitFor({ state: 'detached' });
      await page.getByRole('link', { name: /^Refunds/ }).waitFor();
      await page.locator('select[name=status]').selectOption('inactive');
      await page.getByText('No workflow matches.').waitFor();
      await page.locator('select[name=status]').selectOption('');
    });

    it("opens a workflow and draws its graph: nodes, edges and the entry node", async () => {
      await page.getByRole('link', { name: /^Refunds/ }).click();
      await page.locator('.graph svg').waitFor();
      const nodes = await page.locator('.graph g.node').evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-node')}:${g.getAttribute('data-type')}`));
      expect(nodes).toEqual(['greet:message', 'answer:ai_response', 'bye:message']);
      const edges = await page.locator('.graph line.edge').evaluateAll((ls) => ls.map((l) => `${l.getAttribute('data-from')}->${l.getAttribute('data-to')}`));
      expect(edges).toEqual(['greet->answer', 'answer->bye']);
      await expect(page.locator('.graph figcaption').innerText()).resolves.toContain('Entry node: greet');
      await page.locator(`tr[data-execution="${failedId}"]`).waitFor();
      await check('workflow');
      // Deactivate and activate again (asking for workflows:write first); the API agrees each time.
      await act(page.getByRole('button', { name: 'Deactivate', exact: true }), () => page.getByRole('button', { name: 'Activate', exact: true }).waitFor({ timeout: 15_000 }));
      expect((await t.http.get(`/v1/workflows/${workflowId}`).set(org.auth())).body.data.status).toBe('inactive');
      await page.getByRole('button', { name: 'Activate', exact: true }).click();
      await page.getByRole('button', { name: 'Deactivate', exact: true }).waitFor();
      expect((await t.http.get(`/v1/workflows/${workflowId}`).set(org.auth())).body.data.status).toBe('active');
    });

    it('opens the failed execution, shows its steps on a timeline with attempts, and retries it', async () => {
      // Executions from tomorrow on: none.
      await page.locator('input[name=execution-from]').fill(new Date(Date.now() + 86_400_000).toISOString().slice(0, 16));
      await page.getByText('No execution matches.').waitFor();
      await page.locator('input[name=execution-from]').fill('');
      await page.locator(`tr[data-execution="${failedId}"]`).waitFor();
      await page.locator('select[name=execution-status]').selectOption('success');
      await page.getByText('No execution matches.').waitFor();
      await page.locator('select[name=execution-status]').selectOption('failed');
      await page.locator(`tr[data-execution="${failedId}"] td:first-child a`).click();
      await page.getByRole('heading', { name: /^Execution/ }).waitFor();
      await expect(page.locator('.error[role=alert]').innerText()).resolves.toContain('failed after 2 attempts');
      const bars = await page.locator('svg.timeline g.step-bar').evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-node')}:${g.getAttribute('data-status')}`));
      expect(bars).toEqual(['greet:completed', 'answer:failed']);
      await expect(page.locator('svg.timeline').textContent()).resolves.toContain('answer ×2');
      await check('execution');
      const before = (await t.http.get(`/v1/workflows/${workflowId}/executions?limit=100`).set(org.auth())).body.data.length as number;
      await act(page.getByRole('button', { name: 'Retry' }), () => page.getByText('Retried as').waitFor({ timeout: 15_000 }));
      const retryId = (await page.locator('.notice a').innerText()).trim();
      const retried = await waitFor('the retry to succeed', async () => {
        const x = await t.http.get(`/v1/workflows/${workflowId}/executions/${retryId}`).set(org.auth());
        return x.body.data?.status === 'success' ? x.body.data : undefined;
      });
      expect(retried.retry_of).toBe(failedId);
      expect((await t.http.get(`/v1/workflows/${workflowId}/executions?limit=100`).set(org.auth())).body.data.length).toBe(before + 1);
    });

    it('cancels an execution waiting for the customer', async () => {
      await page.goto(`${base}/console/workflows/${formWorkflowId}/executions/${waitingId}`);
      await page.getByRole('heading', { name: /^Execution/ }).waitFor();
      await expect(page.locator('.badge').first().innerText()).resolves.toBe('running');
      await act(page.getByRole('button', { name: 'Cancel' }), () => page.locator('.error[role=alert]').getByText('EXECUTION_CANCELLED').waitFor({ timeout: 15_000 }));
      const x = (await t.http.get(`/v1/workflows/${formWorkflowId}/executions/${waitingId}`).set(org.auth())).body.data;
      expect(x).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_CANCELLED' } });
      await expect(page.getByRole('button', { name: 'Cancel' }).count()).resolves.toBe(0);
    });

    it("lists a workflow's versions after an update and draws the old version's graph", async () => {
      const created = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: `Versioned ${Date.now()}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'hello', type: 'message', content: 'Hi', next: 'bye' }, { id: 'bye', type: 'message', content: 'Bye' }] },
      });
      const id = created.body.data.id as string;
      const updated = await t.http
        .put(`/v1/workflows/${id}`)
        .set(org.auth('read_write'))
        .send({ configuration: { nodes: [{ id: 'welcome', type: 'message', content: 'Welcome', next: 'ask' }, { id: 'ask', type: 'form', fields: [{ name: 'city', type: 'text' }], next: 'thanks' }, { id: 'thanks', type: 'message', content: 'Thanks' }] } });
      expect(updated.body.data.version).toBe(2);
      const api = (await t.http.get(`/v1/workflows/${id}/versions`).set(org.auth())).body.data as { version: number; created_at: string }[];
      await page.goto(`${base}/console/workflows/${id}`);
      await page.locator('table.versions tr[data-version="1"]').waitFor();
      const rows = await page.locator('table.versions tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-version'), tr.querySelector('td')?.textContent]));
      expect(rows).toEqual([['2', 'Version 2 (current)'], ['1', 'Version 1']]);
      expect(api.map((v) => v.version)).toEqual([2, 1]);
      // The current graph is version 2's.
      const drawn = () => page.locator('.graph g.node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-node')));
      await expect(drawn()).resolves.toEqual(['welcome', 'ask', 'thanks']);
      await check('workflow-versions');
      await page.getByRole('link', { name: 'Version 1', exact: true }).click();
      await page.getByRole('heading', { name: /^Version 1 of Versioned/ }).waitFor();
      await page.locator('.graph svg').waitFor();
      await expect(drawn()).resolves.toEqual(['hello', 'bye']);
      const edges = await page.locator('.graph line.edge').evaluateAll((ls) => ls.map((l) => `${l.getAttribute('data-from')}->${l.getAttribute('data-to')}`));
      expect(edges).toEqual(['hello->bye']);
      await expect(page.locator('.facts').innerText()).resolves.toContain('API key');
      await check('workflow-version');
    });

    it("reads a customer's conversation in order, messages in and out", async () => {
      await page.goto(`${base}/console/customers/${encodeURIComponent(customerId)}`);
      await page.getByRole('heading', { name: /^Conversation with/ }).waitFor();
      await page.locator('.messages li').first().waitFor();
      const items = await page.locator('.messages li').evaluateAll((lis) => lis.map((li) => ({ at: li.getAttribute('data-at') as string, text: `${li.getAttribute('data-direction')}:${li.querySelector('div')?.textContent}` })));
      const shown = items.map((i) => i.text);
      const api = (await t.http.get(`/v1/customers/${encodeURIComponent(customerId)}/messages?limit=100`).set(org.auth())).body.data as { direction: string; content: string; created_at: string }[];
      // Every message of the API, oldest first (messages of one millisecond in the API's own order).
      expect([...shown].sort()).toEqual(api.map((m) => `${m.direction}:${m.content}`).sort());
      expect(items.map((i) => i.at)).toEqual(items.map((i) => i.at).sort());
      expect(shown.indexOf('outbound:Let me check.')).toBeLessThan(shown.indexOf('outbound:Refunds take 14 days.'));
      expect(shown.indexOf('outbound:Refunds take 14 days.')).toBeLessThan(shown.indexOf('outbound:Anything else?'));
      expect(shown[0]).toMatch(/^inbound:refund/);
      expect(shown).toContain('outbound:Let me check.');
      await expect(page.locator('[data-handoff]').getAttribute('data-handoff')).resolves.toBe('off');
      await check('conversation');
      // Take over, then hand back: the state shown is the API's.
      await act(page.getByRole('button', { name: 'Take over' }), () => page.locator('[data-handoff=active]').waitFor({ timeout: 15_000 }));
      expect((await t.http.get(`/v1/customers/${encodeURIComponent(customerId)}`).set(org.auth())).body.data.handoff.active).toBe(true);
      await page.getByRole('button', { name: 'Hand back' }).click();
      await page.locator('[data-handoff=off]').waitFor();
      expect((await t.http.get(`/v1/customers/${encodeURIComponent(customerId)}`).set(org.auth())).body.data.handoff.active).toBe(false);
      await page.goto(`${base}/console/customers`);
      await page.getByRole('link', { name: customerId }).waitFor();
      await check('customers');
    });

    it("shows each outbound message's delivery status as the provider reported it, a failure with its error", async () => {
      // A WhatsApp number (the fake Graph API), a workflow answering through it, the customer's message, and the provider's statuses.
      const appSecret = 'c0501e00c0501e00c0501e00c0501e00';
      const phone = String(300000 + (Date.now() % 100000));
      const account = await t.http.post('/v1/channel-accounts').set(org.auth('read_write')).send({
        name: 'Deliveries line',
        channel: 'whatsapp',
        provider: 'whatsapp_cloud',
        credentials: { phone_number_id: phone, access_token: 'EAAG-console-deliveries', app_secret: appSecret },
      });
      expect(account.status).toBe(201);
      const accountId = account.body.data.id as string;
      const flow = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: `Deliveries ${Date.now()}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'one', type: 'message', content: 'Your order shipped.', next: 'two' }, { id: 'two', type: 'message', content: 'Track it here.' }] },
      });
      await t.http.post(`/v1/workflows/${flow.body.data.id}/activate`).set(org.auth('read_write')).expect(200);
      await createTrigger(t, org, flow.body.data.id, 'message', { keywords: [`shipped${process.pid}`] });
      const customer = `1555${String(Date.now() % 1_000_000).padStart(6, '0')}`;
      const hook = (payload: unknown) => {
        const raw = JSON.stringify(payload);
        return t.http.post(`/v1/channel-accounts/${accountId}/webhook`).set('Content-Type', 'application/json').set('X-Hub-Signature-256', metaSignature(appSecret, raw)).send(raw);
      };
      expect((await hook(whatsappMessagesPayload(phone, [{ from: customer, id: `wamid.console-${Date.now()}`, text: `shipped${process.pid}?` }]))).status).toBe(200);
      await waitFor('two sends', async () => meta.received.filter((m) => m.to === customer).length === 2);
      const [first, second] = meta.received.filter((m) => m.to === customer).map((m) => m.providerMessageId);
      await waitFor('the sends recorded', async () => {
        const listed = (await t.http.get(`/v1/customers/${customer}/messages`).set(org.auth())).body.data as { delivery_status: string | null }[];
        return listed.filter((m) => m.delivery_status === 'sent').length === 2;
      });
      const statuses = whatsappStatusesPayload(phone, [
        { id: first as string, status: 'delivered', recipient: customer },
        { id: second as string, status: 'failed', recipient: customer, error: { code: 131026, title: 'Message undeliverable' } },
      ]);
      expect((await hook(statuses)).status).toBe(200);
      const api = await waitFor('the statuses applied', async () => {
        const listed = (await t.http.get(`/v1/customers/${customer}/messages`).set(org.auth())).body.data as { content: string; delivery_status: string | null }[];
        return listed.some((m) => m.delivery_status === 'failed') && listed.some((m) => m.delivery_status === 'delivered') ? listed : undefined;
      });
      expect(api.map((m) => [m.content, m.delivery_status])).toEqual([['Track it here.', 'failed'], ['Your order shipped.', 'delivered'], [`shipped${process.pid}?`, null]]);

      await page.goto(`${base}/console/customers/${encodeURIComponent(customer)}`);
      await page.locator('.messages li [data-delivery=failed]').waitFor();
      const shown = await page.locator('.messages li').evaluateAll((lis) =>
        lis.map((li) => [li.getAttribute('data-direction'), li.querySelector('div')?.textContent, li.querySelector('[data-delivery]')?.textContent ?? null]),
      );
      expect(shown).toEqual([
        ['inbound', `shipped${process.pid}?`, null],
        ['outbound', 'Your order shipped.', '✓✓ Delivered'],
        ['outbound', 'Track it here.', '✗ Failed: 131026 Message undeliverable'],
      ]);
      // The tick is decoration: what a screen reader reads is the words.
      await expect(page.locator('[data-delivery=delivered]').getByText('Delivered').count()).resolves.toBe(1);
      await expect(page.locator('[data-delivery=delivered] [aria-hidden=true]').innerText()).resolves.toBe('✓✓');
      await check('conversation-deliveries');
    });

    it('shows a webhook delivery with its status and response code, and resends it', async () => {
      await page.goto(`${base}/console/webhooks`);
      await page.getByRole('link', { name: 'Receiver' }).click();
      const row = page.locator('tr[data-log]').first();
      await row.waitFor();
      await expect(row.locator('.response-code').innerText()).resolves.toBe('200');
      await expect(row.locator('.badge').innerText()).resolves.toBe('delivered');
      await check('webhook');
      const eventType = await row.locator('td').first().innerText();
      await act(row.getByRole('button', { name: 'Resend' }), () => page.getByText(/^Resent as delivery/).waitFor({ timeout: 15_000 }));
      // The receiver gets the delivery the page names (its webhook-id), of the event of the row resent.
      const deliveryId = (await page.getByText(/^Resent as delivery/).innerText()).replace('Resent as delivery', '').trim();
      const hit = await waitFor('the resent delivery', async () => receiver.hitsOf('/console-hook').find((h) => h.headers['webhook-id'] === deliveryId));
      expect(JSON.parse(hit.body).type).toBe(eventType);
      // Recover: the events whose delivery failed since an hour ago (none: every delivery here was answered 200).
      await page.locator('input[name=since]').fill(new Date(Date.now() - 3_600_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16));
      await page.getByRole('button', { name: 'Recover' }).click();
      await page.getByText('0 deliveries queued').waitFor({ timeout: 15_000 });
      await page.goto(`${base}/console/webhooks`);
      await page.getByRole('link', { name: 'Receiver' }).waitFor();
      await check('webhooks');
    });

    it("draws the analytics chart from seeded executions, its figures the API's", async () => {
      await page.goto(`${base}/console/analytics?workflow=${analyticsWorkflowId}&start=2026-01-04&end=2026-01-08&tz=UTC`);
      await page.locator('.chart[data-drawn=true] canvas').waitFor({ timeout: 30_000 });
      const shown = await page.locator('table.daily tbody tr').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-date'), r.querySelector('.executions')?.textContent]));
      const api = await t.http
        .get(`/v1/analytics/workflows/${analyticsWorkflowId}?start_date=2026-01-04T00:00:00&end_date=2026-01-08T23:59:59&timezone=UTC&granularity=day`)
        .set(org.auth());
      expect(api.status).toBe(200);
      const daily = api.body.data.daily_metrics as { date: string; executions: number }[];
      expect(shown).toEqual(daily.map((d) => [d.date, String(d.executions)]));
      // The seeded figures themselves: 4, 2 and 3 executions on the 5th, 6th and 7th.
      expect(Object.fromEntries(daily.map((d) => [d.date.slice(0, 10), d.executions]))).toMatchObject({ '2026-01-05': 4, '2026-01-06': 2, '2026-01-07': 3 });
      await expect(page.locator('[data-figure=total_executions]').innerText()).resolves.toBe(String(api.body.data.metrics.total_executions));
      const performance = await t.http.get(`/v1/analytics/workflows/${analyticsWorkflowId}/performance?start_date=2026-01-04T00:00:00&end_date=2026-01-08T23:59:59&timezone=UTC`).set(org.auth());
      await expect(page.locator('[data-figure=p95]').innerText()).resolves.toBe(`${Math.round(performance.body.data.performance.execution_time.p95_ms)} ms`);
      await check('analytics');
      // A report of the same period, made by the worker and downloaded with the user's token.
      await act(page.getByRole('button', { name: 'Create report' }), () => page.getByText(/^Report .*: (generating|completed)/).waitFor({ timeout: 15_000 }));
      const downloadButton = page.getByRole('button', { name: 'Download' });
      await downloadButton.waitFor({ timeout: 60_000 });
      const [file] = await Promise.all([page.waitForEvent('download'), downloadButton.click()]);
      expect(file.suggestedFilename()).toMatch(/^report-.*\.csv$/);
      const csv = readFileSync(await file.path(), 'utf8');
      expect(csv.split('\n')[0]).toMatch(/,/);
      await page.goto(`${base}/console/analytics/engagement`);
      await page.getByRole('heading', { name: 'Engagement' }).waitFor();
      await page.getByText('Messages per session').waitFor();
      await check('engagement');
      await page.goto(`${base}/console/analytics/realtime`);
      await page.getByText('Active workflows').waitFor();
      await check('realtime');
    });

    it('connects a WhatsApp number and shows the webhook URL and verify token to paste', async () => {
      await page.goto(`${base}/console/channels`);
      await page.getByRole('heading', { name: 'Connect an account' }).waitFor();
      await page.locator('select[name=provider]').selectOption('twilio');
      await page.locator('input[name=account_sid]').waitFor();
      // Permission to change is asked before the form is filled in (the consent page is a navigation).
      await page.getByRole('button', { name: 'Allow changes' }).click();
      await consent();
      await page.getByRole('heading', { name: 'Connect an account' }).waitFor();
      await expect(page.getByRole('button', { name: 'Allow changes' }).count()).resolves.toBe(0);
      await page.locator('select[name=provider]').selectOption('whatsapp_cloud');
      await page.locator('input[name=name]').fill('Support line');
      await page.locator('input[name=phone_number_id]').fill('106540352242922');
      await page.locator('input[name=access_token]').fill('EAAG-console-test');
      await page.locator('input[name=app_secret]').fill('3f1c-console-test');
      await page.locator('input[name=verify_token]').fill('console-verify-token');
      await act(page.getByRole('button', { name: 'Connect' }), () => page.locator('[data-field=webhook_url]').waitFor({ timeout: 15_000 }));
      const accounts = (await t.http.get('/v1/channel-accounts').set(org.auth())).body.data as { name: string; webhook_url: string }[];
      const account = accounts.find((a) => a.name === 'Support line');
      expect(account).toBeDefined();
      await expect(page.locator('[data-field=webhook_url]').innerText()).resolves.toBe(account!.webhook_url);
      await expect(page.locator('[data-field=verify_token]').innerText()).resolves.toBe('console-verify-token');
      await check('channels');
    });

    it('signs out: the grant is revoked, its tokens refused', async () => {
      const token = [...bearers].at(-1) as string;
      expect((await t.http.get('/v1/me').set({ Authorization: `Bearer ${token}` })).status).toBe(200);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await waitFor('the token to be refused', async () => (await t.http.get('/v1/me').set({ Authorization: `Bearer ${token}` })).status === 401);
      // Every token the console used, of the grants replaced when it asked for more scopes too.
      for (const used of bearers) expect((await t.http.get('/v1/me').set({ Authorization: `Bearer ${used}` })).status).toBe(401);
      expect(await page.evaluate("sessionStorage.getItem('console.refresh')")).toBeNull();
    });
  });
});
