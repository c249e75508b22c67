/**
 * TwiML answers of a call, built as text: the few verbs used here do not need an XML library, and every
 * text and attribute goes through `xmlEscape`, so a workflow's content cannot break the document.
 */

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** How a call speaks and hears (the account's settings.voice and settings.language); unset attributes are left out. */
export interface SpeechSettings {
  voice?: string;
  language?: string;
}

/** One turn's answer: what is said, then a question (Gather) or the end of the call. */
export interface TurnAnswer {
  /** Spoken first, in order. */
  say: string[];
  /** The question: spoken inside a Gather whose answer goes to `action`; on silence the call goes to `action` without one. */
  gather?: { prompt: string | null; action: string };
  /** After the Says, instead of a Gather: the call ends. */
  hangup?: boolean;
  /** After the Says, instead of a Gather: Twilio asks this URL for the rest (the hold while the run goes on). */
  redirect?: string;
}

/** Escapes text and attribute values alike (`&`, `<`, `>`, both quotes); drops characters XML 1.0 cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function attributes(values: Record<string, string | undefined>): string {
  return Object.entries(values)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([name, value]) => ` ${name}="${xmlEscape(value)}"`)
    .join('');
}

function say(text: string, speech: SpeechSettings): string {
  return `<Say${attributes({ voice: speech.voice, language: speech.language })}>${xmlEscape(text)}</Say>`;
}

/** The TwiML document of a turn. */
export function buildTwiml(answer: TurnAnswer, speech: SpeechSettings): string {
  let body = answer.say.filter((text) => text.trim() !== '').map((text) => say(text, speech)).join('');
  if (answer.gather) {
    const { prompt, action } = answer.gather;
    const attrs = attributes({ input: 'speech dtmf', action, method: 'POST', language: speech.language });
    body += `<Gather${attrs}>${prompt !== null && prompt.trim() !== '' ? say(prompt, speech) : ''}</Gather>`;
    // Twilio goes on past a Gather that heard nothing: back to the same action, which asks again.
    body += `<Redirect method="POST">${xmlEscape(action)}</Redirect>`;
  } else if (answer.redirect) {
    body += `<Redirect method="POST">${xmlEscape(answer.redirect)}</Redirect>`;
  } else if (answer.hangup) {
    body += '<Hangup/>';
  }
  return `${XML_DECLARATION}<Response>${body}</Response>`;
}

/** The answer to a status callback and to anything that needs no instruction. */
export const EMPTY_TWIML = `${XML_DECLARATION}<Response/>`;
