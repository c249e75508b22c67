import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/*
 * Private targets in IPv6 spellings that embed an IPv4 address, refused by the address classifier
 * itself. The app under test has NO WEBHOOK_ALLOWED_CIDRS (which would refuse these addresses for
 * another reason and hide the classifier's answer) and runs APP_ROLE=api: no relay, no delivery
 * processor, and only URL literals (no DNS). Nothing here opens a connection: create and update only
 * classify the address, and the organization is new, so no event could be delivered.
 */
const EMBEDDED_PRIVATE = [
  '[::ffff:0:7f00:1]', // IPv4-translated 127.0.0.1
  '[::ffff:0:a00:1]', // IPv4-translated 10.0.0.1
  '[::ffff:0:a9fe:a9fe]', // IPv4-translated 169.254.169.254
  '[64:ff9b::a9fe:a9fe]', // NAT64 169.254.169.254
  '[2002:a00:1::1]', // 6to4 10.0.0.1
  '[::ffff:10.0.0.1]', // IPv4-mapped 10.0.0.1
  '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', // Teredo
  '[fd00::1]', // unique local
];

describe('webhook targets: IPv4 embedded in IPv6', () => {
  let strict: TestApp;
  let loopback: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    strict = await startTestApp({ APP_ROLE: 'api', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    // Only to create a webhook whose URL the strict app is asked to change (loopback, never contacted: API only).
    loopback = await startTestApp({ APP_ROLE: 'api', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' });
    org = await createOrganization(strict);
  });

  afterAll(async () => {
    // Whatever was created (before the fix some of these were accepted) is removed at once.
    const list = await strict.http.get('/v1/webhooks?limit=100').set(org.auth());
    for (const hook of (list.body.data ?? []) as { id: string }[]) await strict.http.delete(`/v1/webhooks/${hook.id}`).set(org.auth());
    await Promise.all([strict?.close(), loopback?.close()]);
  });

  it('refuses them at create with the answer of any private target (422 WEBHOOK_VALIDATION_FAILED on url)', async () => {
    const reference = await strict.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: 'loopback', url: 'https://[::1]/x', events: ['*'] });
    const expected = [reference.status, reference.body.error?.code, reference.body.error?.field];
    expect(expected).toEqual([422, 'WEBHOOK_VALIDATION_FAILED', 'url']);
    const answers = [];
    for (const host of EMBEDDED_PRIVATE) {
      const res = await strict.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: `ssrf ${host}`, url: `https://${host}/x`, events: ['*'] });
      answers.push([host, res.status, res.body.error?.code, res.body.error?.field]);
    }
    expect(answers).toEqual(EMBEDDED_PRIVATE.map((host) => [host, ...expected]));
  });

  it('refuses them at update', async () => {
    const created = await loopback.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: 'to move', url: 'https://127.0.0.1:1/x', events: ['*'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const answers = [];
    for (const host of EMBEDDED_PRIVATE) {
      const res = await strict.http.put(`/v1/webhooks/${created.body.data.id}`).set(org.auth('read_write')).send({ url: `https://${host}/x` });
      answers.push([host, res.status, res.body.error?.code, res.body.error?.field]);
    }
    expect(answers).toEqual(EMBEDDED_PRIVATE.map((host) => [host, 422, 'WEBHOOK_VALIDATION_FAILED', 'url']));
  });
});
