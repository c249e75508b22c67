import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../src/common/crypto/secret-box.js';
import type { TestApp, TestOrganization } from '../utils/test-app.js';

/**
 * Subscribes the organization to every event (or to `events`) with an active webhook, so that the events
 * the service records for it can be read from `outbox_events`: an event no active webhook subscribes to is
 * not written. The target is loopback, which deliveries may not reach: each delivery fails once, without a
 * request leaving the machine. Written as a row (the API refuses such a target); its secret is sealed by the
 * app, so every process of the deployment opens it.
 */
export async function subscribeToEvents(t: TestApp, org: Pick<TestOrganization, 'id'>, events: string[] = ['*']): Promise<string> {
  const id = randomUUID();
  const sealed = t.app.get(SecretBox).seal(`whsec_${randomUUID()}`, id);
  await t.app.get(DataSource).query(
    `INSERT INTO webhooks (id, organization_id, name, url, events, secret_encrypted, active, max_retries)
     VALUES ($1, $2, 'test events', $3, $4, $5, true, 0)`,
    [id, org.id, `https://127.0.0.1:9/events/${id}`, events, sealed],
  );
  return id;
}
