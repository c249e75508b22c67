import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { row } from '../database/rows.js';
import { OutboxEvent } from './entities/outbox-event.entity.js';
import type { EventType } from './event-types.js';

export interface DomainEvent {
  organizationId: string;
  type: EventType;
  data: Record<string, unknown>;
}

/** Records domain events in the outbox, always inside the caller's transaction. */
@Injectable()
export class EventsService {
  async record(manager: EntityManager, ...events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    await manager
      .createQueryBuilder()
      .insert()
      .into(OutboxEvent)
      .values(events.map((e) => row<OutboxEvent>({ organizationId: e.organizationId, type: e.type, data: e.data })))
      .execute();
  }
}
