import MiniSearch, { type SearchOptions, type SearchResult } from 'minisearch';
import type { KnowledgeEntry } from './entities/knowledge-base.entity.js';
import { terms } from './knowledge-text.js';

/** One entry as ranked for a question. */
export interface RankedEntry {
  /** Position of the entry in the knowledge base. */
  index: number;
  entry: KnowledgeEntry;
  /** MiniSearch's BM25+ score (field boosts and matched-term count included). */
  score: number;
  /** 0..1: this entry's relevance to the question relative to its relevance to its own question. */
  confidence: number;
}

interface IndexedEntry {
  id: number;
  question: string;
  answer: string;
}

/**
 * Search options, identical for customers' questions and self-matches so that an entry's own
 * question scores exactly 1. Prefix search is off: a short word would expand to every longer word
 * it starts ("pay" → "payment", "payroll") and lift unrelated entries. Fuzzy matching is small
 * (edit distance 1, words of 6+ letters, at MiniSearch's fuzzy weight 0.45) so that a typo or a
 * variant spelling still finds its entry but always scores well below the exact word.
 */
const SEARCH_OPTIONS: SearchOptions = {
  boost: { question: 2 },
  prefix: false,
  fuzzy: (term: string) => (term.length >= 6 ? 1 : false),
  combineWith: 'OR',
};

/** Rounded so that a confidence is stable to print and to compare with the threshold. */
const CONFIDENCE_DECIMALS = 4;

/**
 * A BM25+ index over one knowledge base's entries (question boosted ×2, answer ×1). Immutable once
 * built; ranking is deterministic (MiniSearch scoring, ties broken by entry position).
 *
 * Confidence normalises the raw score, which has no fixed scale, by the score the same entry gets
 * when its own question is the query (its "self-match"): the exact question gives 1, a paraphrase
 * sharing some of its distinctive words something in between, an unrelated question 0. MiniSearch
 * multiplies a score by the number of query terms that matched; that factor is divided out of both
 * sides first, so confidence grows linearly with the weight of the words shared rather than with
 * its square (sharing one of two equally rare words gives about 0.5, not 0.25).
 */
export class KnowledgeIndex {
  private readonly search: MiniSearch<IndexedEntry>;
  private readonly selfScores = new Map<number, number>();

  constructor(readonly entries: readonly KnowledgeEntry[]) {
    this.search = new MiniSearch<IndexedEntry>({
      fields: ['question', 'answer'],
      tokenize: terms,
      // `terms` already normalised every token.
      processTerm: (term) => term,
      searchOptions: SEARCH_OPTIONS,
    });
    this.search.addAll(entries.map((entry, id) => ({ id, question: entry.question, answer: entry.answer })));
  }

  /** The best `limit` entries for the question, best first; entries sharing no term are left out. */
  rank(question: string, limit: number): RankedEntry[] {
    return this.results(question)
      .slice(0, limit)
      .map((result) => {
        const index = result.id as number;
        return { index, entry: this.entries[index], score: result.score, confidence: this.confidence(index, result) };
      });
  }

  /** The best entry, or undefined when no entry shares a term with the question. */
  best(question: string): RankedEntry | undefined {
    return this.rank(question, 1)[0];
  }

  private results(query: string): SearchResult[] {
    if (terms(query).length === 0) return [];
    return this.search.search(query).sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number));
  }

  private confidence(index: number, result: SearchResult): number {
    const self = this.selfScore(index);
    if (self <= 0) return 0;
    const ratio = termSum(result) / self;
    const rounded = Number(Math.min(1, Math.max(0, ratio)).toFixed(CONFIDENCE_DECIMALS));
    return rounded;
  }

  /**
   * The entry's score for its own question, memoised. An entry whose question is only stop words
   * ("Why?") is matched through its answer, so its answer joins the self-match query.
   */
  private selfScore(index: number): number {
    let score = this.selfScores.get(index);
    if (score === undefined) {
      const entry = this.entries[index];
      score = this.scoreOf(index, entry.question);
      if (score <= 0) score = this.scoreOf(index, `${entry.question} ${entry.answer}`);
      this.selfScores.set(index, score);
    }
    return score;
  }

  private scoreOf(index: number, query: string): number {
    const own = this.results(query).find((result) => result.id === index);
    return own ? termSum(own) : 0;
  }
}

/** The BM25+ sum over matched terms, without MiniSearch's matched-term-count multiplier. */
function termSum(result: SearchResult): number {
  return result.score / Math.max(1, result.queryTerms.length);
}
