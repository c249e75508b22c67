import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FindOptionsSelect, FindOptionsWhere, Repository } from 'typeorm';
import { CustomerNotFoundError } from './customers.errors.js';
import type { ListCustomersQuery, ListMessagesQuery } from './dto/list-customers.query.js';
import { Customer } from './entities/customer.entity.js';
import { Message } from './entities/message.entity.js';

const MESSAGE_COLUMNS: FindOptionsSelect<Message> = {
  id: true, direction: true, channel: true, content: true, language: true, executionId: true, nodeId: true, author: true, channelAccountId: true, createdAt: true,
};

/** A customer with whether their handoff is active (ends_at compared with the database's now()). */
export interface CustomerDetail {
  customer: Customer;
  handoffActive: boolean;
}

/** The length of customers.external_id: a longer id can name no customer. */
const MAX_CUSTOMER_ID_LENGTH = 200;

/**
 * The read side of customers and their conversations: the organization's customers and each
 * one's messages in both directions. Every query is scoped by the caller's organization; a
 * customer of another organization is 404 as if absent.
 */
@Injectable()
export class CustomersService {
  constructor(
    @InjectRepository(Customer) private readonly customers: Repository<Customer>,
    @InjectRepository(Message) private readonly messages: Repository<Message>,
  ) {}

  /** The organization's customers, newest first (created_at, then id). */
  async listCustomers(organizationId: string, query: ListCustomersQuery): Promise<[Customer[], number]> {
    const where: FindOptionsWhere<Customer> = { organizationId };
    if (query.channel) where.channel = query.channel;
    return this.customers.findAndCount({ where, order: { createdAt: 'DESC', id: 'DESC' }, skip: query.offset, take: query.limit });
  }

  /** A customer by the client's id (external_id), or 404 CUSTOMER_NOT_FOUND. */
  async getCustomer(organizationId: string, customerId: string): Promise<Customer> {
    if (customerId.length === 0 || customerId.length > MAX_CUSTOMER_ID_LENGTH) throw new CustomerNotFoundError();
    const customer = await this.customers.findOne({ where: { organizationId, externalId: customerId } });
    if (!customer) throw new CustomerNotFoundError();
    return customer;
  }

  /** A customer and whether a person has their conversation (an expired handoff is inactive at once). */
  async getCustomerDetail(organizationId: string, customerId: string): Promise<CustomerDetail> {
    if (customerId.length === 0 || customerId.length > MAX_CUSTOMER_ID_LENGTH) throw new CustomerNotFoundError();
    const { entities, raw } = await this.customers
      .createQueryBuilder('c')
      .addSelect('(c.handoff_ends_at > now()) IS TRUE', 'handoff_active')
      .where('c.organization_id = :organizationId AND c.external_id = :customerId', { organizationId, customerId })
      .getRawAndEntities<{ handoff_active: boolean }>();
    const [customer] = entities;
    if (!customer) throw new CustomerNotFoundError();
    return { customer, handoffActive: raw[0]?.handoff_active === true };
  }

  /** A customer's messages in both directions, newest first (created_at, then id). */
  async listCustomerMessages(organizationId: string, customerId: string, query: ListMessagesQuery): Promise<[Message[], number]> {
    const customer = await this.getCustomer(organizationId, customerId);
    return this.messages.findAndCount({
      select: MESSAGE_COLUMNS,
      where: { organizationId, customerId: customer.id },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: query.offset,
      take: query.limit,
    });
  }
}
