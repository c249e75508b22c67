import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpsReceiver, selfSignedCertificate } from '../utils/https-receiver.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';

/**
 * The relay and delivery across processes: built worker processes (APP_ROLE=worker) relay one outbox
 * and deliver to a local HTTPS receiver. Every delivery stays inside loopback (WEBHOOK_ALLOWED_CIDRS).
 */
describe('webhook relay across worker processes', () => {
  let t: TestApp;
  let org: TestOrganization;
  let receiver: HttpsReceiver;
  let tls: ReturnType<typeof selfSignedCertificate>;
  let db: DataSource;
  const workers: WorkerProcess[] = [];
  let counter = 0;

  const workerEnv = () => ({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    WEBHOOK_CA_FILE: tls.certFile,
    WEBHOOK_TIMEOUT_MS: '2000',
  });

  function worker(env: Record<string, string> = {}): WorkerProcess {
    const w = new WorkerProcess(t.config, { ...workerEnv(), ...env });
    workers.push(w);
    w.start();
    return w;
  }

  beforeAll(async () => {
    tls = selfSignedCertificate();
    receiver = new HttpsReceiver(tls);
    await receiver.start();
    // API only: the relay and the processor run in the worker processes.
    t = await startTestApp({ APP_ROLE: 'api', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' });
    db = t.app.get(DataSource);
    org = await createOrganization(t);
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) await w.kill();
    await t?.close();
    await receiver?.stop();
    tls?.cleanup();
  });

  async function subscribe(path: string): Promise<string> {
    const res = await t.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: `relay ${++counter}`, url: receiver.url(path), events: ['*'], retry_policy: { max_retries: 5, retry_delay_ms: 200 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id as string;
  }

  async function emit(count: number, tag: string): Promise<string[]> {
    const rows = (await db.query(
      `INSERT INTO outbox_events (organization_id, type, data)
       SELECT $1, 'message.sent', jsonb_build_object('n', n, 'tag', $2::text) FROM generate_series(1, $3) n RETURNING id`,
      [org.id, tag, count],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  const eventIdsAt = (path: string) => receiver.hitsOf(path).map((h) => (JSON.parse(h.body) as { id: string }).id);

  it('two workers relaying the same outbox deliver each event exactly once', async () => {
    const path = `/twice-${Date.now()}`;
    await subscribe(path);
    const a = worker({ WEBHOOK_TIMEOUT_MS: '10000' });
    const b = worker({ WEBHOOK_TIMEOUT_MS: '10000' });
    const ids: string[] = [];
    // Several statements while both relays run, so that both claim batches.
    for (let i = 0; i < 10; i++) {
      ids.push(...(await emit(30, `twice-${i}`)));
      await new Promise((r) => setTimeout(r, 30));
    }
    await waitFor('300 deliveries', async () => receiver.hitsOf(path).length >= 300, 60_000, 100);
    // The log row is written after the answer: wait for all of them, then for any straggler hit.
    await waitFor('300 log rows', async () => {
      const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhooks w ON w.id = a.webhook_id WHERE w.url = $1`, [receiver.url(path)])) as { n: number }[];
      return n >= 300;
    }, 60_000, 100);
    await new Promise((r) => setTimeout(r, 1000));
    const seen = eventIdsAt(path);
    const retried = (await db.query(
      `SELECT a.status, a.error_message, count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhooks w ON w.id = a.webhook_id
        WHERE w.url = $1 GROUP BY 1, 2`,
      [receiver.url(path)],
    )) as unknown[];
    expect(retried).toEqual([{ status: 'delivered', error_message: null, n: 300 }]);
    expect(seen).toHaveLength(300);
    expect(new Set(seen)).toEqual(new Set(ids));
    await a.kill();
    await b.kill();
  }, 120_000);

  it('a worker killed with SIGKILL in the middle of 200 deliveries loses none', async () => {
    const path = `/killed-${Date.now()}`;
    // Some attempts hang, so that the kill lands while attempts are in flight.
    const hanging = new Set<string>();
    receiver.on(path, (hit) => {
      const id = (JSON.parse(hit.body) as { id: string }).id;
      // The first 10 distinct events hang until the attempt times out: they are mid-flight at the kill.
      if (hanging.size < 10 && !hanging.has(id)) {
        hanging.add(id);
        return null;
      }
      return { status: 200 };
    });
    await subscribe(path);
    const first = worker({ WEBHOOK_CONCURRENCY: '20' });
    const ids = await emit(200, 'killed');
    await waitFor('some deliveries', async () => receiver.hitsOf(path).length >= 40, 30_000, 20);
    await first.kill();
    worker();
    await waitFor('every event delivered', async () => new Set(eventIdsAt(path)).size >= 200, 90_000, 200);
    const seen = eventIdsAt(path);
    expect(new Set(seen)).toEqual(new Set(ids));
    const duplicates = seen.length - new Set(seen).size;
    // Reported, not asserted: at-least-once allows them (retries of the hung attempts count here too).
    console.log(`SIGKILL test: ${ids.length} events, ${seen.length} hits, ${duplicates} duplicate hits (incl. ${hanging.size} deliberate timeouts)`);
    for (const w of workers) await w.kill();
  }, 150_000);

  it('events written while Redis is down are delivered when it comes back', async () => {
    const port = await freePort();
    let redis = startRedis(port);
    await waitFor('redis', async () => canConnect(port), 10_000, 50);
    const path = `/redis-${Date.now()}`;
    await subscribe(path);
    worker({ REDIS_URL: `redis://127.0.0.1:${port}` });
    const before = await emit(20, 'redis-before');
    await waitFor('deliveries before the outage', async () => new Set(eventIdsAt(path)).size >= 20, 60_000, 100);
    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const during = await emit(50, 'redis-during');
    await new Promise((r) => setTimeout(r, 2000));
    redis = startRedis(port);
    try {
      await waitFor('every event delivered after the outage', async () => new Set(eventIdsAt(path)).size >= 70, 90_000, 200);
      expect(new Set(eventIdsAt(path))).toEqual(new Set([...before, ...during]));
    } finally {
      for (const w of workers) await w.kill();
      redis.kill('SIGKILL');
    }
  }, 180_000);
});

function startRedis(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function canConnect(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
