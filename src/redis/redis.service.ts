import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';

/** Called with each message, and with null after a reconnect, when messages may have been missed. */
type Listener = (message: string | null) => void;

/**
 * The service's own Redis connections (Bull keeps its own): one for commands, one opened on
 * first subscription for pub/sub. Every key and channel goes through `key()` so that a
 * REDIS_KEY_PREFIX isolates deployments and test runs sharing one Redis.
 */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisService.name);
  readonly client: Redis;
  private subscriber?: Redis;
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(private readonly config: AppConfig) {
    this.client = this.connect('commands');
  }

  key(...parts: string[]): string {
    return [this.config.redisKeyPrefix, ...parts].join(':');
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(this.key(channel), message);
  }

  async subscribe(channel: string, listener: Listener): Promise<void> {
    const full = this.key(channel);
    if (!this.subscriber) {
      this.subscriber = this.connect('subscriber');
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const l of this.listeners.get(ch) ?? []) l(message);
      });
      let connectedBefore = false;
      this.subscriber.on('ready', () => {
        if (connectedBefore) for (const set of this.listeners.values()) for (const l of set) l(null);
        connectedBefore = true;
      });
    }
    const set = this.listeners.get(full) ?? new Set<Listener>();
    this.listeners.set(full, set);
    set.add(listener);
    if (set.size === 1) await this.subscriber.subscribe(full);
  }

  /** PING with a deadline, for readiness: a disconnected client would otherwise queue the command. */
  async ping(timeoutMs: number): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const reply = await Promise.race([
        this.client.ping(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), timeoutMs))),
      ]);
      return reply === 'PONG';
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.client.quit(), this.subscriber?.quit()]);
  }

  private connect(name: string): Redis {
    const client = new Redis(this.config.redisUrl, { connectionName: `was-${name}`, maxRetriesPerRequest: 2, lazyConnect: false });
    let lastError = '';
    client.on('error', (err: Error) => {
      // ioredis reports every reconnect attempt; log each distinct failure once.
      if (err.message !== lastError) this.logger.warn(`Redis (${name}): ${err.message}`);
      lastError = err.message;
    });
    client.on('ready', () => (lastError = ''));
    return client;
  }
}
