/**
 * Text normalisation shared by indexing and querying, so both sides agree on what a term is:
 * accents folded, lower case, apostrophes dropped ("don't" → "dont"), split on anything that is
 * not a letter or digit, English stop words removed, and a light plural fold ("refunds" → "refund").
 * No full stemmer: a wrong stem makes unrelated words collide, and small fuzzy matching at search
 * time already absorbs most inflections and typos.
 */

// Function words and the interrogative scaffolding every question shares ("how do I", "can you").
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both
  but by can cant could couldnt did didnt do does doesnt doing dont down during each few for from further get got had
  hadnt has hasnt have havent having he hed hell hes her here heres hers herself him himself his how hows i id ill im
  ive if in into is isnt it its itself just lets like may me might more most must mustnt my myself need no nor not of
  off on once only or other ought our ours ourselves out over own please same shall shant she shed shell shes should
  shouldnt so some such than thank thanks that thats the their theirs them themselves then there theres these they
  theyd theyll theyre theyve this those through to too under until up us very want was wasnt we wed well were weve
  werent what whats when whens where wheres which while who whos whom why whys will with wont would wouldnt you youd
  youll youre youve your yours yourself yourselves hello hi hey`.split(/\s+/),
);

const NOT_A_WORD_CHARACTER = /[^\p{L}\p{N}]+/u;

/** Folds a regular English plural to its singular; leaves "-ss", "-us", "-is" words ("address", "status") alone. */
function foldPlural(term: string): string {
  if (term.length > 4 && term.endsWith('ies')) return `${term.slice(0, -3)}y`;
  if (term.length > 3 && term.endsWith('s') && !/(ss|us|is)$/.test(term)) return term.slice(0, -1);
  return term;
}

/** The terms of a text, in order, as the index and the queries see them. */
export function terms(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/['’‘`]/g, '');
  const result: string[] = [];
  for (const token of folded.split(NOT_A_WORD_CHARACTER)) {
    if (token === '' || STOP_WORDS.has(token)) continue;
    result.push(foldPlural(token));
  }
  return result;
}
