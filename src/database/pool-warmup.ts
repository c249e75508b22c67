import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { servicePool } from './sql-statement.js';

/**
 * An API process opens its pool's DATABASE_POOL_MIN connections before it is ready, rather than
 * on the first requests: a connection made while a request waits costs it the connection and
 * PostgreSQL's cold caches. The pool keeps them open however long they idle (data-source.options.ts).
 * A connection that cannot be opened now is left to be opened by the first request that needs it.
 */
@Injectable()
export class PoolWarmup implements OnApplicationBootstrap {
  private readonly logger = new Logger(PoolWarmup.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.servesHttp) return;
    const opened = await this.open(this.config.database.poolMin);
    if (opened < this.config.database.poolMin) {
      this.logger.warn(`${opened} of ${this.config.database.poolMin} PostgreSQL connections opened at start; the rest open on demand`);
    }
  }

  /** Opens up to `count` connections at once and hands them back idle; how many the pool holds then. */
  private async open(count: number): Promise<number> {
    const pool = servicePool(this.dataSource);
    // All held at once: a connect takes an idle connection before it opens one.
    const clients = await Promise.allSettled(Array.from({ length: count }, () => pool.connect()));
    for (const client of clients) if (client.status === 'fulfilled') (client.value as PoolClient).release();
    return pool.totalCount;
  }
}
