import { describe, expect, it } from 'vitest';
import { KnowledgeIndex } from './knowledge-index.js';
import { terms } from './knowledge-text.js';

const FAQ = [
  { question: 'How do I reset my password?', answer: 'Click "Forgot password" on the sign-in page and follow the link we email you.' },
  { question: 'What are your opening hours?', answer: 'We are open Monday to Friday, 9am to 6pm.' },
  { question: 'How can I get a refund?', answer: 'Refunds are issued within 14 days of a return being received.' },
  { question: 'Do you ship internationally?', answer: 'Yes, we ship to over 40 countries; shipping costs depend on the destination.' },
  { question: 'How do I cancel my subscription?', answer: 'Go to Settings > Billing and choose Cancel subscription.' },
  { question: 'Where is my order?', answer: 'Track your order from the link in your confirmation email.' },
];

describe('terms', () => {
  it('lower-cases, folds accents, drops punctuation, apostrophes and stop words, folds plurals', () => {
    expect(terms("What's the CAFÉ's Wi-Fi password? I don't know!")).toEqual(['cafe', 'wi', 'fi', 'password', 'know']);
    expect(terms('Refunds, deliveries & addresses')).toEqual(['refund', 'delivery', 'addresse']);
    expect(terms('status of my address')).toEqual(['status', 'address']);
  });

  it('gives nothing for a question made only of stop words and punctuation', () => {
    expect(terms('How do I...? Can you?')).toEqual([]);
    expect(terms('')).toEqual([]);
  });
});

describe('KnowledgeIndex', () => {
  const index = new KnowledgeIndex(FAQ);
  const best = (question: string) => index.best(question);

  it('chooses the right entry for paraphrased questions', () => {
    expect(best('I forgot my password')?.index).toBe(0);
    expect(best('password reset please')?.index).toBe(0);
    expect(best('when do you open?')?.index).toBe(1);
    expect(best('opening times on friday')?.index).toBe(1);
    expect(best('I would like my money back: refunds?')?.index).toBe(2);
    expect(best('how much does shipping to another country cost')?.index).toBe(3);
    expect(best('Please cancel the subscription')?.index).toBe(4);
    expect(best('track my order')?.index).toBe(5);
  });

  it('tolerates a typo in a long word, at a lower confidence than the right spelling', () => {
    const typo = best('pasword reset');
    expect(typo?.index).toBe(0);
    expect(typo!.confidence).toBeLessThan(best('password reset')!.confidence);
  });

  it('orders confidence: exact question 1 > paraphrase > unrelated 0', () => {
    const exact = best('How do I reset my password?');
    const paraphrase = best('I forgot my password');
    const partial = best('password');
    expect(exact).toMatchObject({ index: 0, confidence: 1 });
    expect(paraphrase!.confidence).toBeGreaterThan(0);
    expect(paraphrase!.confidence).toBeLessThan(1);
    expect(partial!.confidence).toBeLessThan(paraphrase!.confidence);
    expect(best('Is it going to rain tomorrow?')).toBeUndefined();
    for (const entry of FAQ) expect(best(entry.question)?.confidence).toBe(1);
  });

  it('keeps every confidence within 0..1, also for questions longer than the entry\'s', () => {
    const long = index.rank('reset password forgot password sign-in page email link password reset', FAQ.length);
    expect(long[0].index).toBe(0);
    for (const r of long) {
      expect(r.confidence).toBeGreaterThanOrEqual(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('ranks best first and leaves out entries sharing no term', () => {
    const ranked = index.rank('order confirmation email password', 10);
    expect(ranked.map((r) => r.index)).toEqual(expect.arrayContaining([0, 5]));
    expect(ranked.map((r) => r.index)).not.toContain(1);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i].score).toBeLessThanOrEqual(ranked[i - 1].score);
    expect(index.rank('order confirmation email password', 1)).toHaveLength(1);
  });

  it('finds nothing for an empty or stop-word-only question', () => {
    for (const q of ['', '   ', '?!', 'How do I?', 'what is it you do']) {
      expect(best(q), q).toBeUndefined();
      expect(index.rank(q, 5)).toEqual([]);
    }
  });

  it('is deterministic: the same entries and question give the same ranking and confidence', () => {
    const questions = ['I forgot my password', 'refund', 'shipping costs', 'cancel order'];
    const again = new KnowledgeIndex(FAQ.map((e) => ({ ...e })));
    for (const q of questions) {
      const first = index.rank(q, 5);
      expect(index.rank(q, 5)).toEqual(first);
      expect(again.rank(q, 5)).toEqual(first);
    }
  });

  it('breaks score ties by entry position', () => {
    const twins = new KnowledgeIndex([
      { question: 'Unrelated entry', answer: 'Nothing.' },
      { question: 'Delivery time?', answer: 'Two days.' },
      { question: 'Delivery time?', answer: 'Three days.' },
    ]);
    expect(twins.rank('delivery time', 5).map((r) => r.index)).toEqual([1, 2]);
  });

  it('matches an entry whose question is only stop words through its answer', () => {
    const odd = new KnowledgeIndex([{ question: 'Why?', answer: 'Because of the warranty terms.' }, FAQ[0]]);
    expect(odd.best('warranty terms')).toMatchObject({ index: 0, confidence: 1 });
    expect(odd.best('Why?')).toBeUndefined();
  });

  it('weighs a match in the question above the same match in an answer', () => {
    const both = new KnowledgeIndex([
      { question: 'Can I pay by invoice?', answer: 'Yes.' },
      { question: 'Which cards are accepted?', answer: 'All cards; an invoice is sent by email.' },
    ]);
    expect(both.rank('invoice', 2).map((r) => r.index)).toEqual([0, 1]);
  });
});
