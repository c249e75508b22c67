// The reference point of the benchmarks: the smallest NestJS + pg application answering the same
// kind of read as the service, with no auth, validation, ORM, logging or middleware of ours.
// Plain JavaScript: decorators are applied by calling them (Reflect.decorate / parameter decorators).
//   PORT=3999 DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> node bench/baseline/server.mjs
import 'reflect-metadata';
import { Controller, Get, HttpCode, Inject, Injectable, Module, NotFoundException, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';

const PG_POOL = Symbol('PG_POOL');

class BaselineController {
  constructor(pool) {
    this.pool = pool;
  }

  health() {
    return { status: 'ok' };
  }

  async workflowById(id) {
    const { rows } = await this.pool.query('SELECT * FROM workflows WHERE id = $1', [id]);
    if (rows.length === 0) throw new NotFoundException();
    return { data: rows[0] };
  }
}

const method = (name) => Object.getOwnPropertyDescriptor(BaselineController.prototype, name);
Reflect.decorate([Get('health'), HttpCode(200)], BaselineController.prototype, 'health', method('health'));
Reflect.decorate([Get('workflows/:id')], BaselineController.prototype, 'workflowById', method('workflowById'));
// Parameter decorators take (target, propertyKey, index); constructor parameters use an undefined key.
Param('id')(BaselineController.prototype, 'workflowById', 0);
Inject(PG_POOL)(BaselineController, undefined, 0);
Reflect.decorate([Controller('baseline')], BaselineController);

class PoolLifecycle {
  constructor(pool) {
    this.pool = pool;
  }

  async onApplicationShutdown() {
    await this.pool.end();
  }
}
Inject(PG_POOL)(PoolLifecycle, undefined, 0);
Reflect.decorate([Injectable()], PoolLifecycle);

class BaselineModule {}
Reflect.decorate(
  [
    Module({
      controllers: [BaselineController],
      providers: [
        { provide: PG_POOL, useFactory: () => new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 }) },
        PoolLifecycle,
      ],
    }),
  ],
  BaselineModule,
);

// BASELINE_EXPRESS_PROTOTYPES=1: the service's Express adapter (a reference row of workflows-read, built by `npm run bench`).
const adapter = process.env.BASELINE_EXPRESS_PROTOTYPES === '1'
  ? new (await import('../../dist/src/common/http/express-http-adapter.js')).ExpressHttpAdapter()
  : undefined;
const app = adapter
  ? await NestFactory.create(BaselineModule, adapter, { logger: ['error', 'warn'] })
  : await NestFactory.create(BaselineModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3999), '127.0.0.1');
