import type { Response } from 'supertest';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { prepareDatabase } from '../../src/database/prepare-database.js';
import { createFaultWorkflow, keepSending, toAnswer, type Answer } from '../utils/faults.js';
import { PrivatePostgres } from '../utils/private-services.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { subscribeToEvents } from '../factories/webhooks.js';

/**
 * Faults survived: PostgreSQL restarted while the API is under load. The cluster is
 * the test's own (initdb in a temporary directory, its own port); the shared one on 5432 is
 * never touched. While it is down requests fail fast with 503 SERVICE_UNAVAILABLE and
 * Retry-After (no hang, no 500 with a driver message) and readiness says not ready; once it is
 * back the pool recovers by itself.
 */
describe('PostgreSQL restarted under load', { timeout: 180_000 }, () => {
  let pg: PrivatePostgres;
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    pg = await PrivatePostgres.start();
    const databaseUrl = pg.url('was_faults');
    await prepareDatabase({ databaseUrl });
    // Its own Redis prefix: the run jobs queued here name executions of this database only.
    t = await startTestApp({ APP_ROLE: 'api', DATABASE_URL: databaseUrl, REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:pg`, RATE_LIMITS_ENABLED: 'false' });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
  });

  afterAll(async () => {
    await t?.close();
    await pg?.cleanup();
  });

  it('answers 503 fast while it is down, reports not ready, and recovers by itself', async () => {
    await createFaultWorkflow(t, org, 'restart');
    const send = async (i: number): Promise<Answer> => {
      const at = Date.now();
      const res: Response = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: `restart-${i % 50}`, message: 'restart: hello' });
      return { ...toAnswer(res.status, { get: (name) => (res.headers[name] as string | undefined) ?? null }, res.text), at, ms: Date.now() - at };
    };
    const ready = async () => {
      const res = await t.http.get('/health/ready');
      return { status: res.status, database: res.body.checks?.database as string };
    };
    expect(await ready()).toEqual({ status: 200, database: 'up' });

    const load = keepSending(send, 4);
    // Load established before PostgreSQL stops.
    await waitFor('answers before the restart', async () => load.answers.filter((a) => a.status === 202).length >= 10, 60_000, 50);
    await pg.stop();
    const down = Date.now();
    const readinessDown: { status: number; database: string }[] = [];
    while (Date.now() - down < 5000) {
      readinessDown.push(await ready());
      await sleep(500);
    }
    // Down until the start command is given: pg_ctl -w returns some time after the server accepts
    // connections (it polls), and a request answered in between is rightly a 202.
    const starting = Date.now();
    await pg.start();
    await waitFor('readiness after the restart', async () => (await ready()).status === 200, 30_000, 200);
    const recovered = Date.now();
    // Requests sent after readiness came back (checked below: every one accepted).
    await waitFor('answers after the recovery', async () => load.answers.filter((a) => a.at! > recovered).length >= 40, 60_000, 50);
    const answers = await load.stop();

    // Readiness: not ready while down, each time.
    expect(readinessDown.length).toBeGreaterThan(3);
    for (const r of readinessDown) expect(r).toEqual({ status: 503, database: 'down' });

    const during = answers.filter((a) => a.at! >= down && a.at! + a.ms! < starting);
    expect(during.length, 'requests answered while PostgreSQL was down').toBeGreaterThan(5);
    for (const a of answers) {
      expect([202, 503], a.body).toContain(a.status);
      // Fast: a refused connection is answered at once, never after a pool or driver timeout.
      expect(a.ms, a.body).toBeLessThan(3000);
      if (a.status === 503) {
        expect(a.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(a.body).not.toMatch(/ECONN|terminat|postgres|connect|SELECT|INSERT/i);
      }
    }
    for (const a of during) expect(a.status, a.body).toBe(503);
    // The pool recovered by itself: every request sent after readiness came back was accepted.
    const after = answers.filter((a) => a.at! > recovered);
    expect(after.length).toBeGreaterThan(3);
    for (const a of after) expect(a.status, a.body).toBe(202);
  });
});
