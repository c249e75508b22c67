export interface KeywordRules {
  keywords: string[];
  case_sensitive?: boolean;
  exact_match?: boolean;
  language?: string;
  channel?: string;
}

export interface IncomingText {
  text: string;
  channel: string;
  language?: string | null;
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether a message triggers these rules. exact_match: the whole message (trimmed) is one of
 * the keywords. Otherwise a keyword matches as a whole word or phrase anywhere in the message
 * ("help" matches "I need help!" but not "helpful"). A rule's language matches the message's
 * language or its primary subtag ("en" matches "en-GB"); a message without a language only
 * matches rules without one.
 */
export function matchesKeywords(rules: KeywordRules, incoming: IncomingText): boolean {
  if (rules.channel && rules.channel !== incoming.channel) return false;
  if (rules.language) {
    const language = incoming.language?.toLowerCase();
    const wanted = rules.language.toLowerCase();
    if (!language || (language !== wanted && !language.startsWith(`${wanted}-`))) return false;
  }
  const normalise = (s: string) => (rules.case_sensitive ? s : s.toLowerCase());
  const text = normalise(incoming.text.trim());
  return rules.keywords.some((keyword) => {
    const k = normalise(keyword.trim());
    if (k === '') return false;
    if (rules.exact_match) return text === k;
    return new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(k)}($|[^\\p{L}\\p{N}_])`, 'u').test(text);
  });
}
