import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/** TypeORM's own pg pool behind the service's data source: the connections every statement of the service uses. */
export function servicePool(dataSource: DataSource): Pool {
  return (dataSource.driver as PostgresDriver).master as Pool;
}

/**
 * A statement of the execution hot path, run on TypeORM's own pg pool without TypeORM's
 * per-query bookkeeping (query runner, logging, broadcasting), which cost more CPU than these
 * statements' own work in the client. Only for single statements outside a transaction (each is
 * its own transaction).
 *
 * With `prepareAs`, it is sent as a named prepared statement: PostgreSQL parses and plans it once
 * per connection and reuses that plan — for statements whose best plan does not depend on the
 * data, such as a lookup by primary key (planning was about a third of their server time).
 * Without, it is planned on each call with the actual values: statements that join a batch to
 * a table that grows must be, or a plan made while the table was small (a sequential scan)
 * would stay cached for the connection's life — unless each row is looked up by key: an UPDATE's
 * rows by `= ANY (ARRAY[key])` (the run commit), a joined row by a lateral probe with LIMIT 1 (a
 * plain join, even on `= ANY`, may read the whole table once for the batch), an EXISTS with
 * OFFSET 0 (else hashed whole). A test plans the named statements of a conversation's path and of
 * the webhook relay on a new database and fails on any sequential scan
 * (test/e2e/migrations-statistics.e2e-spec.ts).
 * On the partitioned tables, a named statement must not let the planner see a partition key's
 * value (a `uuid[]`, or `= $1`): it would prune while planning, find every such plan cheaper than
 * the generic one and plan each call anew; keys come as JSON or as `(SELECT $1::uuid)`
 * (docs/DECISIONS.md, "Execution engine").
 */
export class SqlStatement<Row> {
  private static readonly prepared = new Map<string, SqlStatement<unknown>>();

  /** Every named statement of the loaded modules, by name (their plans are checked by the tests). */
  static named(): ReadonlyMap<string, SqlStatement<unknown>> {
    return SqlStatement.prepared;
  }

  constructor(
    readonly text: string,
    private readonly options: { prepareAs?: string } = {},
  ) {
    if (options.prepareAs) SqlStatement.prepared.set(options.prepareAs, this as SqlStatement<unknown>);
  }

  async run(dataSource: DataSource, values: unknown[]): Promise<Row[]> {
    const result = await servicePool(dataSource).query<Row & Record<string, unknown>>({ name: this.options.prepareAs, text: this.text, values });
    return result.rows;
  }
}
