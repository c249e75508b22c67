import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChannelAccountsModule } from '../channels/channel-accounts.module.js';
import { ExecutionsModule } from '../executions/executions.module.js';
import { HandoffService } from './handoff.service.js';
import { HandoffSweepLoop } from './handoff-sweep.loop.js';
import { ConversationsService } from './conversations.service.js';
import { CustomersController } from './customers.controller.js';
import { CustomersService } from './customers.service.js';
import { Customer } from './entities/customer.entity.js';
import { Message } from './entities/message.entity.js';

/**
 * Customers and their conversations: `GET /v1/customers` (CustomersService) and the statement that
 * stores inbound messages and routes a reply to the customer's running execution
 * (ConversationsService, used by the triggers module's inbound routes).
 */
@Module({
  // ExecutionsModule: a handoff ends the customer's executions and dispatches agents' messages to the sender.
  imports: [TypeOrmModule.forFeature([Customer, Message]), ExecutionsModule, ChannelAccountsModule],
  controllers: [CustomersController],
  providers: [CustomersService, ConversationsService, HandoffService],
  exports: [CustomersService, ConversationsService, HandoffService],
})
export class CustomersModule {}

/** The handoff sweep, loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [CustomersModule], providers: [HandoffSweepLoop] })
export class CustomersWorkerModule {}
