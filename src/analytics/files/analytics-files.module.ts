import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { AnalyticsModule } from '../analytics.module.js';
import { AnalyticsFilesController } from './analytics-files.controller.js';
import { AnalyticsFilesProcessor } from './analytics-files.processor.js';
import { ANALYTICS_FILES_QUEUE } from './analytics-files.queue.js';
import { AnalyticsFilesService } from './analytics-files.service.js';
import { FileGenerator } from './file-generator.service.js';
import { FilesRepository } from './files.repository.js';

/** Reports and exports: requested and downloaded through the API, made by worker processes. */
@Module({
  imports: [AnalyticsModule, BullModule.registerQueue({ name: ANALYTICS_FILES_QUEUE, settings: { lockDuration: 60_000, stalledInterval: 30_000, maxStalledCount: 2 } })],
  controllers: [AnalyticsFilesController],
  providers: [AnalyticsFilesService, FilesRepository, FileGenerator],
  exports: [FilesRepository, FileGenerator, BullModule],
})
export class AnalyticsFilesModule {}

/** The file generator's processor and the expiry cleanup, loaded only in worker processes. */
@Module({ imports: [AnalyticsFilesModule], providers: [AnalyticsFilesProcessor] })
export class AnalyticsFilesWorkerModule {}
