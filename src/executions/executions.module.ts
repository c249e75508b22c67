import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ExecutionMetricsModule } from '../execution-metrics/execution-metrics.module.js';
import { KnowledgeBasesModule } from '../knowledge-bases/knowledge-bases.module.js';
import { RollupsModule } from '../rollups/rollups.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { CHANNEL_ADAPTERS, type ChannelAdapters } from './channels/channel-adapter.js';
import { StoringChannelAdapter } from './channels/storing-channel.adapter.js';
import { ChannelSendDispatcher } from './channels/channel-send.dispatcher.js';
import { CHANNEL_SENDS_QUEUE, channelSendsQueueSettings } from './channels/channel-sends.queue.js';
import { ExecutionStep } from './entities/execution-step.entity.js';
import { TriggerExecution } from './entities/trigger-execution.entity.js';
import { WorkflowExecution } from './entities/workflow-execution.entity.js';
import { ExecutionEngine } from './execution-engine.service.js';
import { ExecutionOperationsService } from './execution-operations.service.js';
import { ExecutionListsRepository } from './execution-lists.repository.js';
import { ExecutionsQueryService } from './executions-query.service.js';
import { ExecutionsProcessor } from './executions.processor.js';
import { EXECUTIONS_QUEUE } from './executions.queue.js';
import { ExecutionsService } from './executions.service.js';
import { ExecutionRetention } from './retention/execution-retention.service.js';
import { RunsRepository } from './runs.repository.js';
import { AiResponseNodeHandler } from './nodes/ai-response.node-handler.js';
import { FormNodeHandler } from './nodes/form.node-handler.js';
import { MessageNodeHandler } from './nodes/message.node-handler.js';
import { NODE_HANDLERS, type NodeHandler } from './nodes/node-handler.js';
import { WorkflowExecutionsController } from './workflow-executions.controller.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([WorkflowExecution, ExecutionStep, TriggerExecution]),
    // A worker killed mid-job loses its lock after lockDuration; another worker then retries the job.
    BullModule.registerQueue({ name: EXECUTIONS_QUEUE, settings: { lockDuration: 15_000, stalledInterval: 5_000, maxStalledCount: 3 } }),
    // Runs add a send job per message through a channel account; the channels worker processes them.
    BullModule.registerQueue({ name: CHANNEL_SENDS_QUEUE, settings: channelSendsQueueSettings }),
    WorkflowsModule,
    KnowledgeBasesModule,
    // GET /v1/workflows/{id}/metrics lives in this module's workflow controller; its figures come from there.
    ExecutionMetricsModule,
    // Deep pages and a trigger's status totals read the execution rollups.
    RollupsModule,
  ],
  controllers: [WorkflowExecutionsController],
  providers: [
    ExecutionsService,
    ExecutionEngine,
    ExecutionOperationsService,
    RunsRepository,
    ExecutionsQueryService,
    ExecutionListsRepository,
    StoringChannelAdapter,
    ChannelSendDispatcher,
    // One adapter per channel with a connector of its own; the rest store and emit message.sent.
    {
      provide: CHANNEL_ADAPTERS,
      useFactory: (storing: StoringChannelAdapter): ChannelAdapters => Object.assign(new Map(), { fallback: storing }),
      inject: [StoringChannelAdapter],
    },
    MessageNodeHandler,
    AiResponseNodeHandler,
    FormNodeHandler,
    {
      provide: NODE_HANDLERS,
      useFactory: (...handlers: NodeHandler[]) => handlers,
      inject: [MessageNodeHandler, AiResponseNodeHandler, FormNodeHandler],
    },
  ],
  // BullModule: the worker module's processor injects the executions queue registered here. ChannelSendDispatcher:
  // the channels worker attaches its sender to it.
  exports: [ExecutionsService, ExecutionsQueryService, ExecutionEngine, ChannelSendDispatcher, BullModule],
})
export class ExecutionsModule {}

/**
 * The engine's queue processor and the execution data retention loop, loaded only in worker
 * processes (APP_ROLE worker or all).
 */
@Module({ imports: [ExecutionsModule], providers: [ExecutionsProcessor, ExecutionRetention], exports: [ExecutionRetention] })
export class ExecutionsWorkerModule {}
