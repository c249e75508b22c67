import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** Logged rows one fold takes at most: a second of a busy service, folded in one transaction of a few ms per thousand. */
export const FOLD_BATCH = 5_000;
/** What a reader folds at most before it reads (everything logged, short of a backlog of minutes). */
const CATCH_UP_ROWS = 1_000_000;

/** Folds everything logged so far through `dataSource` (for readers built without injection, like the repositories tests construct). */
export async function foldRollups(dataSource: DataSource, maxRows = CATCH_UP_ROWS): Promise<number> {
  const [row] = (await dataSource.query('SELECT rollups_fold($1) AS n', [maxRows])) as { n: number }[];
  return row.n;
}

/**
 * The rollups of executions, firings and messages (hours, days, customer hours, duration days and
 * months, error days, message counts, customer sessions and first channels) are not written by the
 * statements that write those rows: they append their signed rows to a change log, and `rollups_fold` (migration RollupFolding) folds the log into the
 * rollups, one grouped upsert per table per batch, folders taking turns under an advisory lock.
 * The workers fold continuously (RollupFoldLoop); every reader of those rollups calls `catchUp`
 * before it reads, so what it reads counts every execution committed before it asked.
 */
@Injectable()
export class RollupFolder {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Folds the oldest `maxRows` logged rows of each log; how many it took (0: nothing was logged). */
  fold(maxRows = FOLD_BATCH): Promise<number> {
    return foldRollups(this.dataSource, maxRows);
  }

  /** Folds everything logged so far; a no-op of two index probes when the workers are up to date. */
  async catchUp(): Promise<void> {
    await this.fold(CATCH_UP_ROWS);
  }
}
