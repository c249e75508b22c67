import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { EventsService } from '../events/events.service.js';
import { Customer } from './entities/customer.entity.js';
import { Message } from './entities/message.entity.js';

export interface InboundMessage {
  organizationId: string;
  channel: string;
  customerRef: string;
  content: string;
  language?: string | null;
  metadata?: Record<string, unknown>;
}

export interface ReceivedMessage {
  message: Message;
  customer: Customer;
  /** The waiting execution this message was routed to, if the customer had one on this channel. */
  resumed: { executionId: string; triggerId: string | null; triggerExecutionId: string | null } | null;
}

/** Customers and their messages: first contact, inbound messages, routing replies to waiting executions. */
@Injectable()
export class ConversationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventsService,
  ) {}

  /**
   * Stores an inbound message (creating the customer on first contact) and, when the customer
   * has an execution waiting on this channel, routes the message to it — in one transaction.
   */
  async receive(inbound: InboundMessage): Promise<ReceivedMessage> {
    return this.dataSource.transaction(async (manager) => {
      const customer = await this.upsertCustomer(manager, inbound.organizationId, inbound.customerRef, inbound.channel, inbound.language);
      const waiting: { id: string; trigger_id: string | null; trigger_execution_id: string | null }[] = await manager.query(
        `SELECT id, trigger_id, trigger_execution_id FROM workflow_executions
          WHERE customer_id = $1 AND channel = $2 AND waiting
          ORDER BY started_at DESC LIMIT 1`,
        [customer.id, inbound.channel],
      );
      const target = waiting[0];
      const repo = manager.getRepository(Message);
      const message = await repo.save(
        repo.create({
          organizationId: inbound.organizationId,
          customerId: customer.id,
          channel: inbound.channel,
          direction: 'inbound',
          content: inbound.content,
          language: inbound.language ?? null,
          metadata: inbound.metadata ?? {},
          executionId: target?.id ?? null,
        }),
      );
      await this.events.record(manager, {
        organizationId: inbound.organizationId,
        type: 'message.received',
        data: {
          message_id: message.id,
          customer_id: inbound.customerRef,
          channel: inbound.channel,
          content: inbound.content,
          language: inbound.language ?? null,
          execution_id: target?.id ?? null,
        },
      });
      return {
        message,
        customer,
        resumed: target ? { executionId: target.id, triggerId: target.trigger_id, triggerExecutionId: target.trigger_execution_id } : null,
      };
    });
  }

  /** The customer with this id, created on first contact (emits customer.created); last_seen_at moves on. */
  async upsertCustomer(manager: EntityManager, organizationId: string, customerRef: string, channel: string | null, language?: string | null): Promise<Customer> {
    const rows: (Record<string, unknown> & { inserted: boolean })[] = await manager.query(
      `INSERT INTO customers (organization_id, external_id, channel, language, first_seen_at, last_seen_at)
       VALUES ($1, $2, $3, $4, now(), now())
       ON CONFLICT (organization_id, external_id) DO UPDATE
         SET last_seen_at = now(),
             channel = COALESCE(EXCLUDED.channel, customers.channel),
             language = COALESCE(EXCLUDED.language, customers.language),
             updated_at = now()
       RETURNING id, organization_id, external_id, channel, language, attributes, first_seen_at, last_seen_at, created_at, updated_at,
                 (xmax = 0) AS inserted`,
      [organizationId, customerRef, channel, language ?? null],
    );
    const row = rows[0];
    const customer = manager.getRepository(Customer).create({
      id: row.id as string,
      organizationId,
      externalId: customerRef,
      channel: row.channel as string | null,
      language: row.language as string | null,
      attributes: row.attributes as Record<string, unknown>,
      firstSeenAt: row.first_seen_at as Date,
      lastSeenAt: row.last_seen_at as Date,
      createdAt: row.created_at as Date,
      updatedAt: row.updated_at as Date,
    });
    if (row.inserted) {
      await this.events.record(manager, { organizationId, type: 'customer.created', data: { customer_id: customerRef, channel } });
    }
    return customer;
  }

  /** Merges answers into the customer's attributes (emits customer.updated). */
  async updateAttributes(manager: EntityManager, organizationId: string, customerId: string, customerRef: string, attributes: Record<string, unknown>): Promise<void> {
    await manager.query(`UPDATE customers SET attributes = attributes || $2::jsonb, updated_at = now() WHERE id = $1`, [customerId, JSON.stringify(attributes)]);
    await this.events.record(manager, {
      organizationId,
      type: 'customer.updated',
      data: { customer_id: customerRef, attributes, changed: Object.keys(attributes) },
    });
  }
}
