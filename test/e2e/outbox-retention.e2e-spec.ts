import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxRelay } from '../../src/webhooks/outbox-relay.service.js';
import { createOrganization, startTestApp, testConfig, type TestApp, type TestOrganization } from '../utils/test-app.js';

const DAY_MS = 86_400_000;

/** A version 7 id carrying the time `ms` (the app's generator never goes back in time within a process). */
function idAt(ms: number): string {
  const t = ms.toString(16).padStart(12, '0');
  const r = randomBytes(9).toString('hex');
  return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(0, 3)}-8${r.slice(3, 6)}-${r.slice(6, 18)}`;
}

/**
 * OUTBOX_RETENTION: the relay's hourly purge deletes published events older than the retention,
 * found by their time-ordered primary key (migration OutboxPurgeByKey), and nothing else. The app
 * runs as an API only, so no relay publishes the unpublished rows while the test looks; the purge
 * is called on a relay built over its database.
 */
describe('outbox retention', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp({ APP_ROLE: 'api', OUTBOX_RETENTION: '7d' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
  });
  afterAll(() => t?.close());

  /** An event written `daysAgo` days ago (its id carries that time), published `publishedDaysAgo` days ago or not at all. */
  async function event(label: string, daysAgo: number, publishedDaysAgo: number | null): Promise<void> {
    const at = Date.now() - daysAgo * DAY_MS;
    await ds.query(
      `INSERT INTO outbox_events (id, organization_id, type, data, occurred_at, published_at)
       VALUES ($1, $2, 'workflow.completed', jsonb_build_object('label', $3::text), $4, $5)`,
      [idAt(at), org.id, label, new Date(at), publishedDaysAgo === null ? null : new Date(Date.now() - publishedDaysAgo * DAY_MS)],
    );
  }

  it('deletes the published events older than the retention, and keeps the rest', async () => {
    await event('old, published', 9, 9);
    await event('old, published late', 8, 1);
    await event('old, never published', 10, null);
    await event('recent, published', 6, 6);
    await event('just now, published', 0, 0);
    await event('just now, unpublished', 0, null);
    const relay = new OutboxRelay(ds, undefined as never, t.config);
    expect(await relay.purge()).toBe(2);
    const left: { label: string }[] = await ds.query(
      `SELECT data->>'label' AS label FROM outbox_events WHERE organization_id = $1 ORDER BY 1`,
      [org.id],
    );
    expect(left.map((r) => r.label)).toEqual(['just now, published', 'just now, unpublished', 'old, never published', 'recent, published']);
    // Nothing is left to purge: a second run deletes nothing.
    expect(await relay.purge()).toBe(0);
  });

  it('follows EXECUTION_RETENTION when it is the shorter: a published event goes with the executions', async () => {
    await event('three days, published', 3, 3);
    await event('three days, unpublished', 3, null);
    await event('one hour, published', 1 / 24, 1 / 24);
    const relay = new OutboxRelay(ds, undefined as never, testConfig({ OUTBOX_RETENTION: '7d', EXECUTION_RETENTION: '2d' }));
    // This one and the first test's six days old one.
    expect(await relay.purge()).toBe(2);
    const left: { label: string }[] = await ds.query(`SELECT data->>'label' AS label FROM outbox_events WHERE organization_id = $1 ORDER BY 1`, [org.id]);
    expect(left.map((r) => r.label)).toEqual(['just now, published', 'just now, unpublished', 'old, never published', 'one hour, published', 'three days, unpublished']);
  });
});
