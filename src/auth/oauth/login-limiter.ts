import { hash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { RateLimiter } from '../../redis/rate-limiter.js';
import { RedisService } from '../../redis/redis.service.js';

/** Gives back one attempt on each counter that still exists (a DECR on an expired key would create one without expiry). */
const REFUND = `for _, key in ipairs(KEYS) do if redis.call('EXISTS', key) == 1 then redis.call('DECR', key) end end return 0`;

/**
 * Sign-in attempts on the consent page, counted per source IP and per email address (fixed windows
 * in Redis, shared by every process), so that passwords cannot be guessed at speed from one address
 * or against one account from many. Every attempt is counted when it starts (so parallel guesses
 * cannot slip past the limit) and a successful one is given back, so only failures use the budget
 * and a person who signs in often is never locked out. Self-contained (its
 * own keys under `ratelimit:oauth-login:`), beside the /v1 throttling. If Redis is unreachable the
 * attempt is let through and the outage logged: scrypt's cost still bounds guessing speed.
 */
@Injectable()
export class LoginLimiter {
  private readonly logger = new Logger(LoginLimiter.name);

  constructor(
    private readonly limiter: RateLimiter,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {}

  private keys(ip: string, email: string): [string, string] {
    return [`oauth-login:ip:${ip}`, `oauth-login:email:${hash('sha256', email.trim().toLowerCase(), 'hex')}`];
  }

  /** undefined when the attempt may proceed, else the seconds to wait. */
  async attempt(ip: string, email: string): Promise<number | undefined> {
    const { attemptsPerIp, attemptsPerEmail, windowSeconds } = this.config.oauthLogin;
    try {
      const [ipKey, emailKey] = this.keys(ip, email);
      const [byIp, byEmail] = await Promise.all([this.limiter.hit(ipKey, attemptsPerIp, windowSeconds), this.limiter.hit(emailKey, attemptsPerEmail, windowSeconds)]);
      const refused = [byIp, byEmail].filter((r) => !r.allowed);
      return refused.length === 0 ? undefined : Math.max(...refused.map((r) => r.retryAfter));
    } catch (error) {
      this.logger.error(`Sign-in limits not applied, Redis unavailable: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** A successful sign-in gives its attempt back. */
  async succeeded(ip: string, email: string): Promise<void> {
    try {
      await this.redis.client.eval(REFUND, 2, ...this.keys(ip, email).map((k) => this.redis.key('ratelimit', k)));
    } catch (error) {
      this.logger.warn(`Could not give back a successful sign-in attempt: ${(error as Error).message}`);
    }
  }
}
