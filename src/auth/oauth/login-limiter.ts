import { hash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { RateLimiter } from '../../redis/rate-limiter.js';

/**
 * Sign-in attempts on the consent page, counted per source IP and per email address (fixed windows
 * in Redis, shared by every process), so that passwords cannot be guessed at speed from one address
 * or against one account from many. Every attempt counts, successful or not. Self-contained (its
 * own keys under `ratelimit:oauth-login:`), beside the /v1 throttling. If Redis is unreachable the
 * attempt is let through and the outage logged: scrypt's cost still bounds guessing speed.
 */
@Injectable()
export class LoginLimiter {
  private readonly logger = new Logger(LoginLimiter.name);

  constructor(
    private readonly limiter: RateLimiter,
    private readonly config: AppConfig,
  ) {}

  /** undefined when the attempt may proceed, else the seconds to wait. */
  async attempt(ip: string, email: string): Promise<number | undefined> {
    const { attemptsPerIp, attemptsPerEmail, windowSeconds } = this.config.oauthLogin;
    try {
      const [byIp, byEmail] = await Promise.all([
        this.limiter.hit(`oauth-login:ip:${ip}`, attemptsPerIp, windowSeconds),
        this.limiter.hit(`oauth-login:email:${hash('sha256', email.trim().toLowerCase(), 'hex')}`, attemptsPerEmail, windowSeconds),
      ]);
      const refused = [byIp, byEmail].filter((r) => !r.allowed);
      return refused.length === 0 ? undefined : Math.max(...refused.map((r) => r.retryAfter));
    } catch (error) {
      this.logger.error(`Sign-in limits not applied, Redis unavailable: ${(error as Error).message}`);
      return undefined;
    }
  }
}
