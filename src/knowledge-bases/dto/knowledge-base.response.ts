import { ApiProperty } from '@nestjs/swagger';
import type { KnowledgeBase } from '../entities/knowledge-base.entity.js';
import type { KnowledgeBaseSummary } from '../knowledge-bases.service.js';
import { KnowledgeEntryDto } from './put-knowledge-base.dto.js';
import { isoTime } from '../../common/iso-time.js';

/** A list item: no entries, only their count. */
export class KnowledgeBaseSummaryResponse {
  @ApiProperty() name: string;
  @ApiProperty() entry_count: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', description: 'Changes on every PUT' }) updated_at: string;

  /** From a list row (entryCount counted by the query) or a whole knowledge base. */
  static from(kb: KnowledgeBaseSummary | KnowledgeBase): KnowledgeBaseSummaryResponse {
    const entryCount = 'entryCount' in kb ? kb.entryCount : kb.entries.length;
    return { name: kb.name, entry_count: entryCount, created_at: isoTime(kb.createdAt), updated_at: isoTime(kb.updatedAt) };
  }
}

export class KnowledgeBaseResponse extends KnowledgeBaseSummaryResponse {
  @ApiProperty({ type: [KnowledgeEntryDto] }) entries: KnowledgeEntryDto[];

  static override from(kb: KnowledgeBase): KnowledgeBaseResponse {
    return { ...KnowledgeBaseSummaryResponse.from(kb), entries: kb.entries.map((e) => ({ question: e.question, answer: e.answer })) };
  }
}
