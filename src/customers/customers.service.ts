import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, FindOptionsWhere, Repository } from 'typeorm';
import { deliveryStateJoin, type DeliveryStatus } from '../channels/channels.sql.js';
import { SqlStatement } from '../database/sql-statement.js';
import { CustomerNotFoundError } from './customers.errors.js';
import type { ListCustomersQuery, ListMessagesQuery } from './dto/list-customers.query.js';
import { Customer } from './entities/customer.entity.js';
import { Message } from './entities/message.entity.js';

/** A message of a conversation as the list shows it, with where its send stands (deliveryStateJoin's columns: all null without a delivery). */
export type MessageRow = Pick<Message, 'id' | 'direction' | 'channel' | 'content' | 'language' | 'executionId' | 'nodeId' | 'author' | 'channelAccountId' | 'createdAt'> & {
  delivery_status: DeliveryStatus | null;
  delivery_error_code: string | null;
  delivery_error_title: string | null;
};

const DELIVERY = deliveryStateJoin('p');

/**
 * A customer's messages, newest first, each with its delivery state, and how many the customer has,
 * in one round trip: the customer (by the unique (organization_id, external_id)) with its total,
 * counted once (the CTE is materialized, or the count would run again for each row of the page); the
 * page joined to it (idx_messages_customer_created); then each message of the page to its delivery, on
 * the partition key. No row: no such customer in the organization; one row with a NULL id: a page past
 * the end. `$1` organization, `$2` external id, `$3` LIMIT, `$4` OFFSET.
 */
export const MESSAGES_PAGE = new SqlStatement<Partial<MessageRow> & { total: number }>(
  `WITH cu AS MATERIALIZED (
     SELECT c.id, c.organization_id,
            (SELECT count(*)::int FROM messages n WHERE n.customer_id = c.id AND n.organization_id = c.organization_id) AS total
       FROM customers c WHERE c.organization_id = $1 AND c.external_id = $2)
   SELECT cu.total, p.id, p.direction, p.channel, p.content, p.language, p.execution_id AS "executionId", p.node_id AS "nodeId", p.author,
          p.channel_account_id AS "channelAccountId", p.created_at AS "createdAt", ${DELIVERY.columns}
     FROM cu
     LEFT JOIN LATERAL (
       SELECT m.id, m.direction, m.channel, m.content, m.language, m.execution_id, m.node_id, m.author, m.channel_account_id, m.created_at
         FROM messages m
        WHERE m.customer_id = cu.id AND m.organization_id = cu.organization_id
        ORDER BY m.created_at DESC, m.id DESC LIMIT $3 OFFSET $4) p ON true
     ${DELIVERY.join}
    ORDER BY p.created_at DESC, p.id DESC`,
);

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
    @InjectDataSource() private readonly dataSource: DataSource,
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

  /** A customer's messages in both directions, newest first (created_at, then id), each with its delivery state. */
  async listCustomerMessages(organizationId: string, customerId: string, query: ListMessagesQuery): Promise<[MessageRow[], number]> {
    if (customerId.length === 0 || customerId.length > MAX_CUSTOMER_ID_LENGTH) throw new CustomerNotFoundError();
    const rows = await MESSAGES_PAGE.run(this.dataSource, [organizationId, customerId, query.limit, query.offset]);
    if (rows.length === 0) throw new CustomerNotFoundError();
    return [rows.filter((r) => r.id !== null) as MessageRow[], rows[0]!.total];
  }
}
