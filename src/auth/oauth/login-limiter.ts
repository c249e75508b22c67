import { hash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { RateLimiter } from '../../rate-limits/rate-limiter.js';
import { RedisService } from '../../redis/redis.service.js';

/** Gives back one attempt on each counter that still exists (a DECR on an expired key would create one without expiry). */
const IP_POLICY = 'oauth-login-ip';
const EMAIL_POLICY = 'oauth-login-email';
const REFUND = `for _, key in ipairs(KEYS) do if redis.call('EXISTS', key) == 1 then redis.call('DECR', key) end end return 0`;

/**
 * Sign-in attempts on the consent page, counted per source IP and per email address (fixed windows
 * in Redis, shared by every process), so that passwords cannot be guessed at speed from one address
 * or against one account from many. Every attempt is counted when it starts (so parallel guesses
 * cannot slip past the limit) and a successful one is given back, so only failures use the budget
 * and a person who signs in often is never locked out. Self-contained (its
 * own policies `oauth-login-ip` and `oauth-login-email` in the shared limiter's one-round-trip script), beside the /v1 throttling. If Redis is unreachable the
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

  /** undefined when the attempt may proceed, else the seconds to wait. Both limits in one round trip. */
  async attempt(ip: string, email: string): Promise<number | undefined> {
    const { attemptsPerIp, attemptsPerEmail, windowSeconds } = this.config.oauthLogin;
    const [ipKey, emailKey] = this.keys(ip, email);
    // hitMany fails open by itself (logged and counted) when Redis does not answer.
    const outcome = await this.limiter.hitMany([
      { policy: IP_POLICY, key: ipKey, limit: attemptsPerIp, windowSeconds },
      { policy: EMAIL_POLICY, key: emailKey, limit: attemptsPerEmail, windowSeconds },
    ]);
    if (outcome.allowed) return undefined;
    return Math.max(...outcome.results.filter((r) => !r.allowed).map((r) => r.retryAfter));
  }

  /** A successful sign-in gives its attempt back. */
  async succeeded(ip: string, email: string): Promise<void> {
    try {
      const [ipKey, emailKey] = this.keys(ip, email);
      await this.redis.client.eval(REFUND, 2, this.redis.key('rl', IP_POLICY, ipKey), this.redis.key('rl', EMAIL_POLICY, emailKey));
    } catch (error) {
      this.logger.warn(`Could not give back a successful sign-in attempt: ${(error as Error).message}`);
    }
  }
}
