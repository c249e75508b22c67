import { CHANNELS, type Channel } from '../../common/channels.js';
import type { ConfigReader, TriggerTypeDefinition } from './trigger-type.js';
import { codePointLength } from '../../common/validation/text-length.decorator.js';

export const MAX_KEYWORDS = 50;
export const MAX_KEYWORD_LENGTH = 200;
/** A BCP 47 language tag, loosely: a primary language and optional subtags (`en`, `pt-BR`, `zh-Hant-TW`). */
export const LANGUAGE_TAG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

export interface MessageTriggerConfiguration {
  /** Trimmed, without duplicates, in the order given. */
  keywords: string[];
  case_sensitive: boolean;
  /** true: the whole message must equal a keyword; false: a keyword anywhere in the message matches. */
  exact_match: boolean;
  language: string | null;
  /** The channel monitored; null means any. */
  channel: Channel | null;
}

/** Fires when an inbound message matches one of its keywords. */
export const messageTriggerType: TriggerTypeDefinition<MessageTriggerConfiguration> = {
  type: 'message',
  keys: ['keywords', 'case_sensitive', 'exact_match', 'language', 'channel'],
  readOnlyKeys: [],

  parse(_input: Record<string, unknown>, r: ConfigReader) {
    const raw = r.optional('keywords');
    if (!Array.isArray(raw) || raw.length === 0) r.fail('keywords', 'keywords must be a non-empty array of strings');
    if (raw.length > MAX_KEYWORDS) r.fail('keywords', `A trigger has at most ${MAX_KEYWORDS} keywords`);
    const keywords: string[] = [];
    raw.forEach((keyword: unknown, i) => {
      if (typeof keyword !== 'string' || keyword.trim() === '' || codePointLength(keyword) > MAX_KEYWORD_LENGTH) {
        r.fail(`keywords[${i}]`, `Each keyword must be a non-empty string of at most ${MAX_KEYWORD_LENGTH} characters`);
      }
      const trimmed = keyword.trim();
      if (!keywords.includes(trimmed)) keywords.push(trimmed);
    });

    const language = r.optional('language');
    if (language !== undefined && (typeof language !== 'string' || language.length > 35 || !LANGUAGE_TAG.test(language))) {
      r.fail('language', 'language must be a language code such as en or pt-BR');
    }
    const channel = r.optional('channel');
    if (channel !== undefined && !(CHANNELS as readonly unknown[]).includes(channel)) {
      r.fail('channel', `channel must be one of ${CHANNELS.join(', ')}`);
    }

    return {
      configuration: {
        keywords,
        case_sensitive: r.boolean('case_sensitive', false),
        exact_match: r.boolean('exact_match', false),
        language: (language as string | undefined) ?? null,
        channel: (channel as Channel | undefined) ?? null,
      },
    };
  },

  present(configuration) {
    return { ...configuration };
  },
};
