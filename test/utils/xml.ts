/**
 * A strict, small XML reader for the tests of TwiML answers (no XML parser among the dependencies):
 * the XML declaration, elements, attributes in double or single quotes, text, and the predefined and
 * numeric entities. Anything else that XML 1.0 refuses (a raw `<` or `&` in text or an attribute, a
 * tag closed by another name, two roots, an attribute twice) throws, so a document it reads is well formed.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: (XmlElement | string)[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9._:-]*/;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`raw < in ${where}`);
  return raw.replace(/&([^;]*);|&/g, (match, entity: string | undefined) => {
    if (entity === undefined) throw new Error(`raw & in ${where}`);
    if (entity in ENTITIES) return ENTITIES[entity] as string;
    const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(entity);
    if (!numeric) throw new Error(`unknown entity &${entity}; in ${where}`);
    const code = numeric[1]!.startsWith('x') ? parseInt(numeric[1]!.slice(1), 16) : Number(numeric[1]);
    return String.fromCodePoint(code);
  });
}

export function parseXml(text: string): XmlElement {
  let at = 0;
  const declaration = /^<\?xml\s+version="1\.0"(\s+encoding="[A-Za-z0-9._-]+")?\s*\?>/.exec(text);
  if (declaration) at = declaration[0].length;
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at]!)) at += 1;
  };

  const element = (): XmlElement => {
    if (text[at] !== '<') throw new Error(`expected < at ${at}`);
    at += 1;
    const name = NAME.exec(text.slice(at))?.[0];
    if (!name) throw new Error(`expected an element name at ${at}`);
    at += name.length;
    const attributes: Record<string, string> = {};
    for (;;) {
      const before = at;
      skipSpace();
      if (text.startsWith('/>', at)) {
        at += 2;
        return { name, attributes, children: [] };
      }
      if (text[at] === '>') {
        at += 1;
        break;
      }
      if (before === at) throw new Error(`expected a space before an attribute at ${at}`);
      const attribute = NAME.exec(text.slice(at))?.[0];
      if (!attribute) throw new Error(`expected an attribute at ${at}`);
      at += attribute.length;
      if (text[at] !== '=') throw new Error(`expected = at ${at}`);
      const quote = text[at + 1];
      if (quote !== '"' && quote !== "'") throw new Error(`expected a quote at ${at + 1}`);
      const end = text.indexOf(quote, at + 2);
      if (end < 0) throw new Error('unterminated attribute');
      if (Object.hasOwn(attributes, attribute)) throw new Error(`attribute ${attribute} twice`);
      attributes[attribute] = decode(text.slice(at + 2, end), `attribute ${attribute}`);
      at = end + 1;
    }
    const children: (XmlElement | string)[] = [];
    for (;;) {
      const next = text.indexOf('<', at);
      if (next < 0) throw new Error(`${name} is not closed`);
      if (next > at) children.push(decode(text.slice(at, next), `text of ${name}`));
      at = next;
      if (text.startsWith('</', at)) {
        const close = `</${name}>`;
        if (!text.startsWith(close, at)) throw new Error(`${name} closed by another tag at ${at}`);
        at += close.length;
        return { name, attributes, children };
      }
      children.push(element());
    }
  };

  skipSpace();
  const root = element();
  skipSpace();
  if (at !== text.length) throw new Error(`content after the root element at ${at}`);
  return root;
}

/** The element children of an element. */
export function elements(node: XmlElement): XmlElement[] {
  return node.children.filter((c): c is XmlElement => typeof c !== 'string');
}

/** The text of an element (its text children, joined). */
export function textOf(node: XmlElement): string {
  return node.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
}
