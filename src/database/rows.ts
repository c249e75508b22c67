import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';

/**
 * Types an entity's values for `insert()`/`update()`. TypeORM's deep-partial type cannot express
 * jsonb columns typed as `Record<string, unknown>`; the entity's own shape is checked here instead.
 */
export function row<T>(values: Partial<T>): QueryDeepPartialEntity<T> {
  return values as QueryDeepPartialEntity<T>;
}
