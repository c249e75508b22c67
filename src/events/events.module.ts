import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxEvent } from './entities/outbox-event.entity.js';
import { EventsService } from './events.service.js';

@Module({ imports: [TypeOrmModule.forFeature([OutboxEvent])], providers: [EventsService], exports: [EventsService] })
export class EventsModule {}
