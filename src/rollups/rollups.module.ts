import { Module } from '@nestjs/common';
import { RollupFoldLoop } from './rollup-fold.loop.js';
import { RollupFolder } from './rollup-folder.js';

/**
 * Provider-only: the change logs of the execution rollups and their fold (RollupFolder). Readers
 * of the folded rollups import this module and call `catchUp` first.
 */
@Module({ providers: [RollupFolder], exports: [RollupFolder] })
export class RollupsModule {}

/** The continuous fold, loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [RollupsModule], providers: [RollupFoldLoop] })
export class RollupsWorkerModule {}
