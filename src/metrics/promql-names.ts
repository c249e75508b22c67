const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);

/**
 * The metric names a PromQL expression reads, in order of appearance: identifiers left once label
 * matchers (`{…}`), ranges (`[…]`), strings, Grafana variables, grouping lists and numbers are taken
 * out, that are neither a function (followed by `(`) nor a keyword.
 */
export function metricNamesOf(expr: string): string[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d[\w.]*/g, ' ');
  const names: string[] = [];
  for (const match of text.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = text.slice(match.index! + match[0].length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(match[0].toLowerCase())) continue;
    if (!names.includes(match[0])) names.push(match[0]);
  }
  return names;
}
