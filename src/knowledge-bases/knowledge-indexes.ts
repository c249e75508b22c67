import { Inject, Injectable, Optional } from '@nestjs/common';
import { KnowledgeIndex } from './knowledge-index.js';
import { KnowledgeBaseNotFoundError } from './knowledge-bases.errors.js';
import { KnowledgeBasesService, type KnowledgeBaseVersion } from './knowledge-bases.service.js';

interface CachedIndex {
  /** `id:updated_at`: a replaced (new updated_at) or deleted and re-created (new id) knowledge base misses. */
  version: string;
  index: KnowledgeIndex;
  /** Characters of text indexed, which is what an index's memory grows with. */
  weight: number;
}

/** Bounds of the in-process cache: by count and by indexed text, whichever is reached first. */
export interface IndexCacheLimits {
  maxEntries: number;
  maxCharacters: number;
}

/** 500 knowledge bases, or about 25 million characters of questions and answers (a few hundred MB of index). */
export const DEFAULT_INDEX_CACHE_LIMITS: IndexCacheLimits = { maxEntries: 500, maxCharacters: 25_000_000 };

/** Optional provider overriding DEFAULT_INDEX_CACHE_LIMITS (tests). */
export const INDEX_CACHE_LIMITS = Symbol('INDEX_CACHE_LIMITS');

/**
 * Built BM25 indexes, least recently used first out, one per (organization, name) holding the
 * version it was built from. Every lookup asks PostgreSQL for the current version (id and
 * updated_at only, by the unique index), so a PUT or DELETE from any process is seen at once;
 * the entries are loaded and indexed only when that version is not the cached one.
 */
@Injectable()
export class KnowledgeIndexes {
  private readonly cache = new Map<string, CachedIndex>();
  private weight = 0;

  constructor(
    private readonly knowledgeBases: KnowledgeBasesService,
    @Optional() @Inject(INDEX_CACHE_LIMITS) private readonly limits: IndexCacheLimits = DEFAULT_INDEX_CACHE_LIMITS,
  ) {}

  /** The index of the organization's knowledge base; throws KnowledgeBaseNotFoundError when it has none of that name. */
  async get(organizationId: string, name: string): Promise<KnowledgeIndex> {
    const key = `${organizationId}/${name}`;
    let current: KnowledgeBaseVersion;
    try {
      current = await this.knowledgeBases.getVersion(organizationId, name);
    } catch (error) {
      if (error instanceof KnowledgeBaseNotFoundError) this.remove(key);
      throw error;
    }

    const cached = this.cache.get(key);
    if (cached && cached.version === versionOf(current)) {
      // Re-insert: a Map iterates in insertion order, so its first key is the least recently used.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached.index;
    }

    // Load the row as a whole, so that the entries and the version stored with them match even if
    // a PUT lands between the two queries.
    const knowledgeBase = await this.knowledgeBases.getOwned(organizationId, name);
    const index = new KnowledgeIndex(knowledgeBase.entries);
    const weight = knowledgeBase.entries.reduce((sum, e) => sum + e.question.length + e.answer.length, 0);
    this.remove(key);
    this.cache.set(key, { version: versionOf(knowledgeBase), index, weight });
    this.weight += weight;
    this.evict();
    return index;
  }

  /** How many indexes are held (for tests and metrics). */
  get size(): number {
    return this.cache.size;
  }

  private remove(key: string): void {
    const cached = this.cache.get(key);
    if (!cached) return;
    this.cache.delete(key);
    this.weight -= cached.weight;
  }

  private evict(): void {
    // Never evicts the index just added, even when it alone is over the character bound.
    while (this.cache.size > 1 && (this.cache.size > this.limits.maxEntries || this.weight > this.limits.maxCharacters)) {
      const oldest = this.cache.keys().next().value as string;
      this.remove(oldest);
    }
  }
}

function versionOf(kb: { id: string; updatedAt: Date }): string {
  return `${kb.id}:${kb.updatedAt.getTime()}`;
}
