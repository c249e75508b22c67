import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
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
  imports: [TypeOrmModule.forFeature([Customer, Message])],
  controllers: [CustomersController],
  providers: [CustomersService, ConversationsService],
  exports: [CustomersService, ConversationsService],
})
export class CustomersModule {}
