import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { RedisService } from '../redis/redis.service.js';

export type CheckStatus = 'up' | 'down';

export interface Readiness {
  status: 'ok' | 'unavailable';
  checks: { database: CheckStatus; redis: CheckStatus };
}

const CHECK_TIMEOUT_MS = 2000;

@Injectable()
export class HealthService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisService,
  ) {}

  async readiness(): Promise<Readiness> {
    const [database, redis] = await Promise.all([this.databaseUp(), this.redis.ping(CHECK_TIMEOUT_MS)]);
    const checks = { database: up(database), redis: up(redis) };
    return { status: database && redis ? 'ok' : 'unavailable', checks };
  }

  private async databaseUp(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.dataSource.query('SELECT 1'),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS))),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}

function up(ok: boolean): CheckStatus {
  return ok ? 'up' : 'down';
}
