import { beforeEach, describe, expect, it } from 'vitest';
import type { KnowledgeBase, KnowledgeEntry } from './entities/knowledge-base.entity.js';
import { KnowledgeBaseNotFoundError } from './knowledge-bases.errors.js';
import type { KnowledgeBasesService } from './knowledge-bases.service.js';
import { KnowledgeIndexes } from './knowledge-indexes.js';

const ORG = '11111111-1111-4111-8111-111111111111';

/** An in-memory stand-in for the service, counting how often entries are loaded. */
class FakeKnowledgeBases {
  readonly rows = new Map<string, KnowledgeBase>();
  loads = 0;

  put(organizationId: string, name: string, entries: KnowledgeEntry[], updatedAt: number, id = `${organizationId}-${name}`) {
    this.rows.set(`${organizationId}/${name}`, { id, organizationId, name, entries, createdAt: new Date(0), updatedAt: new Date(updatedAt) });
  }

  async getVersion(organizationId: string, name: string) {
    const row = this.rows.get(`${organizationId}/${name}`);
    if (!row) throw new KnowledgeBaseNotFoundError();
    return { id: row.id, updatedAt: row.updatedAt };
  }

  async getOwned(organizationId: string, name: string) {
    const row = this.rows.get(`${organizationId}/${name}`);
    if (!row) throw new KnowledgeBaseNotFoundError();
    this.loads += 1;
    return row;
  }
}

const entry = (question: string, answer = 'An answer.') => ({ question, answer });

describe('KnowledgeIndexes', () => {
  let fake: FakeKnowledgeBases;
  let indexes: KnowledgeIndexes;

  beforeEach(() => {
    fake = new FakeKnowledgeBases();
    indexes = new KnowledgeIndexes(fake as unknown as KnowledgeBasesService, { maxEntries: 3, maxCharacters: 1000 });
  });

  it('builds an index once per version and reuses it', async () => {
    fake.put(ORG, 'faq', [entry('What are your opening hours?')], 1000);
    const first = await indexes.get(ORG, 'faq');
    expect(await indexes.get(ORG, 'faq')).toBe(first);
    expect(fake.loads).toBe(1);
  });

  it('rebuilds when updated_at or the id changes (replace, or delete and re-create)', async () => {
    fake.put(ORG, 'faq', [entry('What are your opening hours?')], 1000);
    const first = await indexes.get(ORG, 'faq');
    fake.put(ORG, 'faq', [entry('How can I get a refund?')], 1001);
    const second = await indexes.get(ORG, 'faq');
    expect(second).not.toBe(first);
    expect(second.best('refund')).toBeDefined();
    fake.put(ORG, 'faq', [entry('Do you ship abroad?')], 1001, 'another-id');
    expect((await indexes.get(ORG, 'faq')).best('abroad')).toBeDefined();
    expect(fake.loads).toBe(3);
    expect(indexes.size).toBe(1);
  });

  it('keeps organizations apart', async () => {
    const other = '22222222-2222-4222-8222-222222222222';
    fake.put(ORG, 'faq', [entry('What are your opening hours?')], 1000);
    fake.put(other, 'faq', [entry('How can I get a refund?')], 1000);
    expect((await indexes.get(ORG, 'faq')).best('refund')).toBeUndefined();
    expect((await indexes.get(other, 'faq')).best('refund')).toBeDefined();
  });

  it('throws KnowledgeBaseNotFoundError for a missing knowledge base and forgets a deleted one', async () => {
    await expect(indexes.get(ORG, 'missing')).rejects.toBeInstanceOf(KnowledgeBaseNotFoundError);
    fake.put(ORG, 'faq', [entry('What are your opening hours?')], 1000);
    await indexes.get(ORG, 'faq');
    fake.rows.clear();
    await expect(indexes.get(ORG, 'faq')).rejects.toBeInstanceOf(KnowledgeBaseNotFoundError);
    expect(indexes.size).toBe(0);
  });

  it('evicts the least recently used index beyond the count bound', async () => {
    for (const name of ['a', 'b', 'c', 'd']) fake.put(ORG, name, [entry(`Question ${name}?`)], 1000);
    await indexes.get(ORG, 'a');
    await indexes.get(ORG, 'b');
    await indexes.get(ORG, 'c');
    await indexes.get(ORG, 'a'); // a is now the most recently used
    await indexes.get(ORG, 'd'); // evicts b
    expect(indexes.size).toBe(3);
    fake.loads = 0;
    await indexes.get(ORG, 'a');
    await indexes.get(ORG, 'c');
    expect(fake.loads).toBe(0);
    await indexes.get(ORG, 'b');
    expect(fake.loads).toBe(1);
  });

  it('evicts beyond the character bound but keeps the index just built', async () => {
    fake.put(ORG, 'small', [entry('Short question?')], 1000);
    fake.put(ORG, 'big', [entry('Big question?', 'x'.repeat(1200))], 1000);
    await indexes.get(ORG, 'small');
    await indexes.get(ORG, 'big');
    expect(indexes.size).toBe(1);
    fake.loads = 0;
    await indexes.get(ORG, 'big');
    expect(fake.loads).toBe(0);
  });
});
