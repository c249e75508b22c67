import { Module } from '@nestjs/common';
import { IdempotencyGuard } from './idempotency.guard.js';
import { IdempotencyStore } from './idempotency.store.js';

/** Provider-only: the Idempotency-Key guard (a global guard in AppModule, the last one) and its Redis store. */
@Module({
  providers: [IdempotencyStore, IdempotencyGuard],
  exports: [IdempotencyGuard],
})
export class IdempotencyModule {}
