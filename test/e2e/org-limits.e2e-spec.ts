import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OrganizationLimits, ORGANIZATION_LIMITS_REFRESH_MS } from '../../src/rate-limits/organization-limits.js';
import { RedisService } from '../../src/redis/redis.service.js';
import { ApiProcess } from '../utils/api-process.js';
import { requireBuiltCli, runCli } from '../utils/cli.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';


/** Small deployment defaults, so that a few requests reach them. */
const DEFAULTS = { RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_PER_CREDENTIAL: '4', RATE_LIMIT_READ: '2' };

/** Runs the built CLI against this app's database and Redis prefix, with the small defaults. */
const cli = (t: TestApp, ...args: string[]) => runCli(t.config, args, DEFAULTS);

async function setLimits(t: TestApp, org: string, ...flags: string[]) {
  const result = await cli(t, 'org:limits', '--org', org, ...flags);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { organization_id: string; limits: Record<string, { value: number; source: string }> };
}

/** How many requests a key gets on `path` before the 429, and the X-RateLimit-Limit of the answers. */
async function allowance(t: TestApp, auth: { Authorization: string }, path: string, max = 20): Promise<{ served: number; limits: Set<string> }> {
  const limits = new Set<string>();
  for (let served = 0; served < max; served++) {
    const res = await t.http.get(path).set(auth);
    limits.add(res.headers['x-ratelimit-limit']);
    if (res.status === 429) return { served, limits };
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  throw new Error(`no 429 within ${max} requests`);
}

let prefixes = 0;
/** Each app counts under its own key prefix: the counters and the change messages of one test reach no other. */
function ownPrefix(): string {
  return `${inject('redisKeyPrefix')}:ol${process.pid}x${++prefixes}`;
}

describe('per-organization rate limits (org:limits)', { timeout: 120_000 }, () => {
  let t: TestApp;

  beforeAll(async () => {
    requireBuiltCli();
    t = await startTestApp({ APP_ROLE: 'api', REDIS_KEY_PREFIX: ownPrefix(), ...DEFAULTS });
  });
  afterAll(() => t?.close());

  /** Until this app applies an override to the organization (source `override`) or none (`default`): asked in process, so no request is counted. */
  async function applied(org: TestOrganization, source: 'default' | 'override') {
    const limits = t.app.get(OrganizationLimits);
    await waitFor(`${source} applied`, async () => (limits.of(org.id) === undefined) === (source === 'default'), 6000);
  }

  it('an override raises (or lowers) the organization\'s allowance and its headers; another organization keeps the defaults', async () => {
    const [raised, lowered, other] = [await createOrganization(t), await createOrganization(t), await createOrganization(t)];
    expect((await setLimits(t, raised.id, '--per-credential', '7')).limits.per_credential_per_hour).toEqual({ value: 7, source: 'override' });
    await setLimits(t, lowered.id, '--per-credential', '2');
    await applied(raised, 'override');
    await applied(lowered, 'override');

    // /v1/me counts against the credential only: its allowance is the organization's.
    expect(await allowance(t, raised.auth('full_access'), '/v1/me')).toEqual({ served: 7, limits: new Set(['7']) });
    expect(await allowance(t, lowered.auth('full_access'), '/v1/me')).toEqual({ served: 2, limits: new Set(['2']) });
    expect(await allowance(t, other.auth('full_access'), '/v1/me')).toEqual({ served: 4, limits: new Set(['4']) });
  });

  it('a route class is overridden on its own: read (list/get) 5 instead of 2, the policy header names the override', async () => {
    const [org, other] = [await createOrganization(t), await createOrganization(t)];
    await setLimits(t, org.id, '--read', '5', '--per-credential', '50');
    await applied(org, 'override');
    const first = await t.http.get('/v1/workflows').set(org.auth('read_only'));
    expect(first.headers['ratelimit-policy']).toBe('"credential";q=50;w=3600, "workflows-read";q=5;w=3600');
    expect(first.headers['x-ratelimit-limit']).toBe('5');
    expect(first.headers['x-ratelimit-remaining']).toBe('4');
    expect((await allowance(t, org.auth('read_only'), '/v1/workflows')).served).toBe(4);
    const refused = await t.http.get('/v1/workflows').set(org.auth('read_only'));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.headers.ratelimit).toMatch(/^"workflows-read";r=0;/);
    // The other organization: the deployment's 2.
    expect(await allowance(t, other.auth('read_only'), '/v1/workflows')).toEqual({ served: 2, limits: new Set(['2']) });
  });

  it('GET /v1/me shows every limit in force and its source; default and --reset give the defaults back', async () => {
    const org = await createOrganization(t);
    const initial = (await t.http.get('/v1/me').set(org.auth())).body.data.organization;
    expect(initial.id).toBe(org.id);
    expect(initial.rate_limits_enabled).toBe(true);
    expect(Object.keys(initial.limits).sort()).toEqual(
      [
        'per_credential_per_hour', 'read_per_hour', 'write_per_hour', 'delete_per_hour', 'execution_per_hour', 'analytics_realtime_per_hour',
        'analytics_historical_per_hour', 'analytics_reports_per_hour', 'analytics_export_per_hour',
      ].sort(),
    );
    expect(initial.limits.per_credential_per_hour).toEqual({ value: 4, source: 'default' });
    expect(initial.limits.read_per_hour).toEqual({ value: 2, source: 'default' });
    expect(initial.limits.write_per_hour).toEqual({ value: t.config.rateLimits.write, source: 'default' });

    const set = await setLimits(t, org.id, '--per-credential', '100000', '--analytics-export', '40', '--write', '300');
    expect(set.limits.analytics_export_per_hour).toEqual({ value: 40, source: 'override' });
    await applied(org, 'override');
    let limits = (await t.http.get('/v1/me').set(org.auth())).body.data.organization.limits;
    expect(limits.per_credential_per_hour).toEqual({ value: 100000, source: 'override' });
    expect(limits.analytics_export_per_hour).toEqual({ value: 40, source: 'override' });
    expect(limits.write_per_hour).toEqual({ value: 300, source: 'override' });
    expect(limits.read_per_hour).toEqual({ value: 2, source: 'default' });

    // A flag not given keeps its value; `default` clears one.
    const cleared = await setLimits(t, org.id, '--write', 'default');
    expect(cleared.limits.write_per_hour).toEqual({ value: t.config.rateLimits.write, source: 'default' });
    expect(cleared.limits.per_credential_per_hour).toEqual({ value: 100000, source: 'override' });
    await waitFor('write back to default', async () => t.app.get(OrganizationLimits).effective(org.id).write_per_hour.source === 'default', 6000);
    // No flag: prints the limits, changes nothing.
    expect((await setLimits(t, org.id)).limits).toEqual(cleared.limits);

    // --reset: every override cleared (the row goes).
    const reset = await setLimits(t, org.id, '--reset');
    expect(Object.values(reset.limits).every((l) => l.source === 'default')).toBe(true);
    await applied(org, 'default');
    limits = (await t.http.get('/v1/me').set(org.auth('read_only'))).body.data.organization.limits;
    expect(limits.per_credential_per_hour).toEqual({ value: 4, source: 'default' });
    expect(await t.app.get(DataSource).query('SELECT 1 FROM organization_limits WHERE organization_id = $1', [org.id])).toEqual([]);
  });

  it('the override costs no round trip: one rate-limit script per request, no other Redis command, whether the organization has one or not', async () => {
    const [org, other] = [await createOrganization(t), await createOrganization(t)];
    await setLimits(t, org.id, '--per-credential', '9');
    await applied(org, 'override');
    // Each key resolved (and cached) before counting.
    for (const who of [org, other]) expect((await t.http.get('/v1/me').set(who.auth('read_only'))).status).toBe(200);
    const client = t.app.get(RedisService).client;
    const original = client.sendCommand;
    const sent: string[] = [];
    client.sendCommand = function (this: typeof client, ...args: Parameters<typeof original>) {
      sent.push((args[0] as { name: string }).name);
      return original.apply(this, args);
    } as typeof original;
    const dataSource = t.app.get(DataSource);
    const query = dataSource.driver.createQueryRunner;
    let queryRunners = 0;
    dataSource.driver.createQueryRunner = function (this: unknown, ...args: Parameters<typeof query>) {
      queryRunners++;
      return query.apply(this, args);
    } as typeof query;
    const perRequest: number[] = [];
    try {
      for (const who of [org, other]) {
        queryRunners = 0;
        expect((await t.http.get('/v1/me').set(who.auth('read_only'))).status).toBe(200);
        perRequest.push(queryRunners);
      }
    } finally {
      client.sendCommand = original;
      dataSource.driver.createQueryRunner = query;
    }
    expect(sent).toEqual(['evalsha', 'evalsha']);
    // PostgreSQL is asked the same with an override as without: the route's own read of the organization
    // (its execution_retention) and nothing for the limits.
    expect(perRequest[0]).toBe(perRequest[1]);
    expect(perRequest[0]).toBeLessThanOrEqual(1);
  });

  // (Every rule of the figures: organization-limits.spec.ts; here, what the built CLI answers.)
  it('invalid input: a clear message and a non-zero exit, nothing stored', { timeout: 180_000 }, async () => {
    const org = await createOrganization(t);
    for (const [flags, message] of [
      [['--per-credential', '0'], /--per-credential must be an integer from 1 to 100000000, or default \(got "0"\)/],
      [['--execution=-5'], /--execution must be an integer/],
      [['--analytics-export', '100000001'], /--analytics-export must be an integer from 1 to 100000000/],
      [['--hook', '5'], /Unknown option '--hook'/],
      [['--read'], /argument missing/],
    ] as const) {
      const result = await cli(t, 'org:limits', '--org', org.id, ...flags);
      expect(result.code, flags.join(' ')).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/Failed:|\n\s+at /);
    }
    const unknown = await cli(t, 'org:limits', '--org', '00000000-0000-4000-8000-000000000000', '--read', '5');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/No organization 00000000-0000-4000-8000-000000000000/);
    expect((await cli(t, 'org:limits', '--org', 'not-a-uuid')).stderr).toMatch(/No organization not-a-uuid/);
    expect((await cli(t, 'org:limits', '--read', '5')).stderr).toMatch(/--org is required/);
    // The limit flags belong to org:limits only.
    expect((await cli(t, 'org:create', '--name', 'x', '--read', '5')).code).not.toBe(0);
    expect(await t.app.get(DataSource).query('SELECT 1 FROM organization_limits WHERE organization_id = $1', [org.id])).toEqual([]);
    // The help text names every flag.
    const help = (await cli(t, 'no:such-command')).stderr;
    for (const flag of ['--per-credential', '--read', '--write', '--delete', '--execution', '--analytics-realtime', '--analytics-historical', '--analytics-reports', '--analytics-export', '--reset']) {
      expect(help).toContain(flag);
    }
  });

  describe('two API processes', () => {
    let apis: ApiProcess[] = [];
    /** A default out of reach of the polls below (they ask /v1/me with a key of their own). */
    const PER_CREDENTIAL = 1000;

    beforeAll(async () => {
      apis = await Promise.all([0, 1].map(() => ApiProcess.start(t.config, { LOG_LEVEL: 'warn', ...DEFAULTS, RATE_LIMIT_PER_CREDENTIAL: String(PER_CREDENTIAL) })));
      await Promise.all(apis.map((api) => api.ready()));
    });
    afterAll(async () => {
      await Promise.all(apis.map((api) => api.stop()));
    });

    /** The process's per-credential limit for the organization: X-RateLimit-Limit of /v1/me (also on its 429), and its source from the body. */
    async function perCredential(api: ApiProcess, org: TestOrganization): Promise<{ value: number; source: string }> {
      const res = await api.fetch('/v1/me', { headers: org.auth('read_only') });
      const value = Number(res.headers.get('x-ratelimit-limit'));
      if (res.status === 429) return { value, source: 'refused' };
      const shown = ((await res.json()) as { data: { organization: { limits: { per_credential_per_hour: { value: number; source: string } } } } }).data.organization.limits.per_credential_per_hour;
      // A request during the process's re-read can be limited with the old figure and show the new one: not settled yet.
      if (shown.value !== value) return { value: Number.NaN, source: 'changing' };
      return shown;
    }

    /** Until every process shows `value`; how long it took after `since`. */
    async function everyProcessShows(org: TestOrganization, value: number, since: number): Promise<number> {
      await waitFor(`${value} on both processes`, async () => (await Promise.all(apis.map((api) => perCredential(api, org)))).every((l) => l.value === value), 15_000, 50);
      return Date.now() - since;
    }

    it('a change through the CLI is applied by every running API process at once (Redis message), its requests counted with it', async () => {
      const org = await createOrganization(t);
      for (const api of apis) expect(await perCredential(api, org)).toEqual({ value: PER_CREDENTIAL, source: 'default' });
      await setLimits(t, org.id, '--per-credential', '6');
      // Told through Redis (published as the CLI ends): well within the periodic read's bound.
      expect(await everyProcessShows(org, 6, Date.now())).toBeLessThan(ORGANIZATION_LIMITS_REFRESH_MS / 2);
      // Both processes count the one allowance of the credential with the override (6: 3 each, the 7th refused).
      const statuses: number[] = [];
      const limits = new Set<string>();
      for (let i = 0; i < 7; i++) {
        const res = await apis[i % 2].fetch('/v1/me', { headers: org.auth('full_access') });
        statuses.push(res.status);
        limits.add(res.headers.get('x-ratelimit-limit') ?? '');
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
      expect(limits).toEqual(new Set(['6']));
    });

    it(`a change whose Redis message never came is applied within ${ORGANIZATION_LIMITS_REFRESH_MS / 1000} s (the periodic read)`, async () => {
      const org = await createOrganization(t);
      for (const api of apis) expect((await perCredential(api, org)).source).toBe('default');
      // Written straight to the table: no message published.
      const started = Date.now();
      await t.app.get(DataSource).query('INSERT INTO organization_limits (organization_id, per_credential_per_hour) VALUES ($1, 11)', [org.id]);
      const took = await everyProcessShows(org, 11, started);
      expect(took).toBeLessThanOrEqual(ORGANIZATION_LIMITS_REFRESH_MS + 1000);
    });
  });
});
