import { ApiProperty } from '@nestjs/swagger';
import type { KnowledgeBase } from '../entities/knowledge-base.entity.js';
import type { KnowledgeBaseSummary } from '../knowledge-bases.service.js';
import { KnowledgeEntryDto } from './put-knowledge-base.dto.js';

/** A list item: no entries, only their count. */
export class KnowledgeBaseSummaryResponse {
  @ApiProperty() name: string;
  @ApiProperty() entry_count: number;
  @ApiProperty({ format: 'date-time' }) created_at: Date;
  @ApiProperty({ format: 'date-time', description: 'Changes on every PUT' }) updated_at: Date;

  static fromSummary(kb: KnowledgeBaseSummary): KnowledgeBaseSummaryResponse {
    return { name: kb.name, entry_count: kb.entryCount, created_at: kb.createdAt, updated_at: kb.updatedAt };
  }
}

export class KnowledgeBaseResponse extends KnowledgeBaseSummaryResponse {
  @ApiProperty({ type: [KnowledgeEntryDto] }) entries: KnowledgeEntryDto[];

  static from(kb: KnowledgeBase): KnowledgeBaseResponse {
    return {
      name: kb.name,
      entries: kb.entries.map((e) => ({ question: e.question, answer: e.answer })),
      entry_count: kb.entries.length,
      created_at: kb.createdAt,
      updated_at: kb.updatedAt,
    };
  }
}
