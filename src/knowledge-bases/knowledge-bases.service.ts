import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { PageQuery } from '../common/pagination/page.query.js';
import { KNOWLEDGE_BASE_NAME } from './dto/knowledge-base-name.param.js';
import type { KnowledgeEntryDto } from './dto/put-knowledge-base.dto.js';
import { KnowledgeBase, type KnowledgeEntry } from './entities/knowledge-base.entity.js';
import { KnowledgeBaseNotFoundError } from './knowledge-bases.errors.js';

/** A list row: the entry count is computed in SQL so a page never loads the entries. */
export interface KnowledgeBaseSummary {
  name: string;
  entryCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What identifies one content of a knowledge base: any PUT changes `updatedAt`. */
export interface KnowledgeBaseVersion {
  id: string;
  updatedAt: Date;
}

interface UpsertRow {
  id: string;
  name: string;
  entries: KnowledgeEntry[];
  created_at: Date;
  updated_at: Date;
  created: boolean;
}

/**
 * One statement, so concurrent PUTs of a new name cannot collide. `updated_at` is kept to the
 * millisecond (what a JavaScript Date holds) and moves forward by at least 1 ms on every replace:
 * the responders' index cache is keyed by it, so two replaces must never share a value.
 * `xmax = 0` holds only for a row this statement inserted.
 */
const UPSERT_SQL = `
  INSERT INTO knowledge_bases AS kb (organization_id, name, entries, created_at, updated_at)
  VALUES ($1, $2, $3::jsonb, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))
  ON CONFLICT (organization_id, name) DO UPDATE
    SET entries = EXCLUDED.entries,
        updated_at = GREATEST(EXCLUDED.updated_at, date_trunc('milliseconds', kb.updated_at) + interval '1 millisecond')
  RETURNING kb.id, kb.name, kb.entries, kb.created_at, kb.updated_at, (kb.xmax = 0) AS created`;

@Injectable()
export class KnowledgeBasesService {
  constructor(@InjectRepository(KnowledgeBase) private readonly knowledgeBases: Repository<KnowledgeBase>) {}

  async list(organizationId: string, query: PageQuery): Promise<[KnowledgeBaseSummary[], number]> {
    const qb = this.knowledgeBases.createQueryBuilder('kb').where('kb.organization_id = :organizationId', { organizationId });
    const [rows, total] = await Promise.all([
      qb
        .clone()
        .select('kb.name', 'name')
        .addSelect('jsonb_array_length(kb.entries)', 'entry_count')
        .addSelect('kb.created_at', 'created_at')
        .addSelect('kb.updated_at', 'updated_at')
        .orderBy('kb.created_at', 'DESC')
        .addOrderBy('kb.id', 'DESC')
        .offset(query.offset)
        .limit(query.limit)
        .getRawMany<{ name: string; entry_count: number; created_at: Date; updated_at: Date }>(),
      qb.getCount(),
    ]);
    return [rows.map((r) => ({ name: r.name, entryCount: r.entry_count, createdAt: r.created_at, updatedAt: r.updated_at })), total];
  }

  /** The caller's knowledge base with its entries, or 404 (another organization's is absent too). */
  async getOwned(organizationId: string, name: string): Promise<KnowledgeBase> {
    if (!KNOWLEDGE_BASE_NAME.test(name)) throw new KnowledgeBaseNotFoundError();
    const knowledgeBase = await this.knowledgeBases.findOne({ where: { organizationId, name } });
    if (!knowledgeBase) throw new KnowledgeBaseNotFoundError();
    return knowledgeBase;
  }

  /** Only the id and version: the responders' cheap check before they use a cached index. */
  async getVersion(organizationId: string, name: string): Promise<KnowledgeBaseVersion> {
    if (!KNOWLEDGE_BASE_NAME.test(name)) throw new KnowledgeBaseNotFoundError();
    const row = await this.knowledgeBases.findOne({ select: { id: true, updatedAt: true }, where: { organizationId, name } });
    if (!row) throw new KnowledgeBaseNotFoundError();
    return { id: row.id, updatedAt: row.updatedAt };
  }

  /** Creates the knowledge base or replaces all its entries; `created` tells which. */
  async put(organizationId: string, name: string, entries: KnowledgeEntryDto[]): Promise<{ knowledgeBase: KnowledgeBase; created: boolean }> {
    // Only the two known fields are stored, whatever else the objects carry.
    const stored: KnowledgeEntry[] = entries.map((e) => ({ question: e.question, answer: e.answer }));
    const [row] = (await this.knowledgeBases.query(UPSERT_SQL, [organizationId, name, JSON.stringify(stored)])) as UpsertRow[];
    const knowledgeBase = this.knowledgeBases.create({
      id: row.id,
      organizationId,
      name: row.name,
      entries: row.entries,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    });
    return { knowledgeBase, created: row.created };
  }

  async delete(organizationId: string, name: string): Promise<void> {
    if (!KNOWLEDGE_BASE_NAME.test(name)) throw new KnowledgeBaseNotFoundError();
    const result = await this.knowledgeBases.delete({ organizationId, name });
    if (!result.affected) throw new KnowledgeBaseNotFoundError();
  }
}
