import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChannelAccountsModule } from '../channels/channel-accounts.module.js';
import { CustomersModule } from '../customers/customers.module.js';
import { ExecutionMetricsModule } from '../execution-metrics/execution-metrics.module.js';
import { ExecutionsModule } from '../executions/executions.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { Trigger } from './entities/trigger.entity.js';
import { HooksController } from './hooks.controller.js';
import { MessagesController } from './messages.controller.js';
import { SchedulesProcessor } from './schedules.processor.js';
import { TriggerExecutionsController } from './trigger-executions.controller.js';
import { TriggerFiringService } from './trigger-firing.service.js';
import { TriggerSchedulesService } from './trigger-schedules.service.js';
import { TriggersController } from './triggers.controller.js';
import { TriggersService } from './triggers.service.js';
import { BURSTS_QUEUE, SCHEDULES_QUEUE } from './triggers.queue.js';
import { BurstsProcessor } from './bursts.processor.js';

@Module({
  imports: [TypeOrmModule.forFeature([Trigger]), BullModule.registerQueue({ name: SCHEDULES_QUEUE }), BullModule.registerQueue({ name: BURSTS_QUEUE }), WorkflowsModule, ExecutionsModule, CustomersModule, ExecutionMetricsModule, ChannelAccountsModule],
  controllers: [TriggersController, TriggerExecutionsController, MessagesController, HooksController],
  providers: [TriggersService, TriggerSchedulesService, TriggerFiringService],
  // BullModule: the queues registered here, for the worker module's processors.
  exports: [TriggersService, TriggerSchedulesService, TriggerFiringService, BullModule],
})
export class TriggersModule {}

/** The schedules and bursts processors, loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [TriggersModule, CustomersModule], providers: [SchedulesProcessor, BurstsProcessor] })
export class TriggersWorkerModule {}
