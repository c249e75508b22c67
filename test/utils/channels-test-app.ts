import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { startFakeMeta, type FakeMeta } from './fake-meta.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from './test-app.js';
import { subscribeToEvents } from '../factories/webhooks.js';

/** An in-process app whose WhatsApp and Instagram sends go to a fake Graph API, with two organizations. */
export interface ChannelsTestApp {
  t: TestApp;
  fake: FakeMeta;
  org: TestOrganization;
  /** A second organization, for the isolation checks. */
  other: TestOrganization;
  db: DataSource;
  close(): Promise<void>;
}

/**
 * Starts the fake provider and the app pointed at it, rate limits out of reach. `name` keeps the
 * file's Redis keys apart; `env` adds to or overrides the configuration.
 */
export async function startChannelsTestApp(name: string, env: Record<string, string> = {}): Promise<ChannelsTestApp> {
  const fake = await startFakeMeta();
  let t: TestApp | undefined;
  try {
    t = await startTestApp({
      ...RATE_LIMITS_OUT_OF_REACH,
      REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:${name}`,
      WHATSAPP_API_URL: fake.url,
      INSTAGRAM_API_URL: fake.url,
      CHANNEL_SEND_TIMEOUT: '1s',
      ...env,
    });
    const org = await createOrganization(t);
    const other = await createOrganization(t);
    // Both read the events they caused (and must not see the other's) from the outbox.
    await subscribeToEvents(t, org);
    await subscribeToEvents(t, other);
    const app = t;
    return {
      t,
      fake,
      org,
      other,
      db: t.app.get(DataSource),
      close: async () => {
        await app.close();
        await fake.close();
      },
    };
  } catch (error) {
    await t?.close();
    await fake.close();
    throw error;
  }
}
