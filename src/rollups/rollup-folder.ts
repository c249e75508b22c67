import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** Logged rows one fold takes at most: a second of a busy service, folded in one transaction of a few ms per thousand. */
export const FOLD_BATCH = 5_000;
/**
 * A reader catches up in folds of this many rows per log: each its own short transaction, so that a backlog (workers
 * down for a while) never makes one statement outlast DATABASE_STATEMENT_TIMEOUT, and the workers' folds interleave.
 */
const CATCH_UP_CHUNK = 20_000;

/**
 * One fold of at most `maxRows` rows per log; how many it took. `wait`: behind a fold in progress (a reader needs
 * its rows), else 0 at once when another process is folding.
 */
async function foldOnce(dataSource: DataSource, maxRows: number, wait = true): Promise<number> {
  // The deliveries' log has a fold of its own (migration DeliveryRollupsFolded), taken second by every folder.
  const [row] = (await dataSource.query('SELECT rollups_fold($1, $2) + delivery_rollups_fold($1, $2) AS n', [maxRows, wait])) as { n: number }[];
  return row.n;
}

/**
 * Folds everything logged before the call through `dataSource` (readers built without injection, like the
 * repositories tests construct, call this). A fold that takes fewer rows than asked has emptied every log.
 */
export async function foldRollups(dataSource: DataSource): Promise<number> {
  let total = 0;
  for (;;) {
    const taken = await foldOnce(dataSource, CATCH_UP_CHUNK);
    total += taken;
    if (taken < CATCH_UP_CHUNK) return total;
  }
}

/**
 * The rollups of executions, firings, messages and sends (hours, days, customer hours, duration days and
 * months, error days, message counts, customer sessions and first channels, delivery hours) are not written by the
 * statements that write those rows: they append their signed rows to a change log, and `rollups_fold` (migration RollupFolding; `delivery_rollups_fold`, migration DeliveryRollupsFolded, for the sends) folds the log into the
 * rollups, one grouped upsert per table per batch, folders taking turns under an advisory lock.
 * The workers fold continuously (RollupFoldLoop); every reader of those rollups calls `catchUp`
 * before it reads, so what it reads counts every execution committed before it asked.
 */
@Injectable()
export class RollupFolder {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The workers' fold: skips its turn (0) while another process folds. */
  fold(maxRows = FOLD_BATCH): Promise<number> {
    return foldOnce(this.dataSource, maxRows, false);
  }

  /** Folds everything logged so far; one check of the (empty) logs when the workers are up to date. */
  async catchUp(): Promise<void> {
    await foldRollups(this.dataSource);
  }
}
