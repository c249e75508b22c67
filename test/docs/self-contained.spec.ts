import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The repository is all a newcomer has: what it says must make sense without anything outside it.
 * No path outside the repository (`../shared`), no section of a design card kept elsewhere
 * (`DESIGN §8`, `STYLE §10`), no issue number (`issue 12`) and no branch name of past work (`wt-perf`)
 * in the code, the docs or the README. Say the reason, or cite docs/API.md, docs/ARCHITECTURE.md or
 * docs/DECISIONS.md by section.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What is scanned: these files, and every file under these folders. */
const SCANNED = ['README.md', '.env.example', 'src', 'docs'];

const FORBIDDEN: { name: string; pattern: RegExp }[] = [
  { name: 'a path outside the repository', pattern: /\.\.\/shared\b/ },
  { name: 'a design card section', pattern: /\b(?:DESIGN|STYLE)(?:\.md)? ?§/ },
  { name: 'the specification kept outside', pattern: /spec\/service-api\.md/ },
  { name: 'a branch name', pattern: /(?<![\w-])wt-[a-z]+/ },
  { name: 'an issue number', pattern: /\bissues? #?\d+/i },
];

function filesUnder(path: string): string[] {
  const absolute = join(ROOT, path);
  let stat;
  try {
    stat = statSync(absolute);
  } catch {
    return [];
  }
  if (stat.isFile()) return [path];
  return readdirSync(absolute).flatMap((entry) => filesUnder(join(path, entry)));
}

/** Every hit as `file:line: text (what it is)`. */
export function findReferences(files: { path: string; text: string }[]): string[] {
  const hits: string[] = [];
  for (const { path, text } of files) {
    text.split('\n').forEach((line, index) => {
      for (const { name, pattern } of FORBIDDEN) {
        if (pattern.test(line)) hits.push(`${path}:${index + 1}: ${line.trim().slice(0, 160)} (${name})`);
      }
    });
  }
  return hits;
}

describe('the repository explains itself', () => {
  it('finds each kind of reference it forbids, and lets the legitimate look-alikes pass', () => {
    const planted = [
      'See ../shared/DESIGN.md for the rules.',
      'The delay formula (DESIGN §8).',
      'Table ownership (STYLE §10).',
      'The contract is spec/service-api.md.',
      'Measured on wt-perf before the merge.',
      'Fixed for Issue 12, defect 8.',
      'issue #7 again',
    ];
    const hits = findReferences(planted.map((text, i) => ({ path: `planted-${i}`, text })));
    expect(hits.map((h) => h.split(':')[0])).toEqual(planted.map((_, i) => `planted-${i}`));

    const fine = [
      'RFC 6749 §4.1.2: the error goes to the redirect URI.',
      'JWT clients live in src/auth/jwt-clients/.',
      'an issue with the cursor',
      'the newest issues first',
    ];
    expect(findReferences(fine.map((text, i) => ({ path: `fine-${i}`, text })))).toEqual([]);
  });

  it('has no reference to a path outside it, a design card section, an issue number or a branch name', () => {
    const self = relative(ROOT, fileURLToPath(import.meta.url));
    const files = SCANNED.flatMap(filesUnder)
      .filter((path) => path !== self && /\.(ts|md|mjs|js|json|yml|yaml|sql|example)$|^\.env\.example$/.test(path))
      .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    const hits = findReferences(files);
    expect(hits, `say the reason or cite docs/API.md, docs/ARCHITECTURE.md, docs/DECISIONS.md instead:\n${hits.join('\n')}`).toEqual([]);
  });

  it('cites docs by names those docs have', () => {
    // `docs/DECISIONS.md, "Analytics", "Engagement"`: each quoted name must be a heading of that doc or,
    // for DECISIONS.md, the bold title of one of its paragraphs; a renamed section fails here.
    const names = (doc: string): string[] => {
      const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
      const headings = [...text.matchAll(/^#+ (.+)$/gm)].map((m) => m[1] as string);
      const titles = [...text.matchAll(/^\*\*([^*]+?)\.?\*\*/gm)].map((m) => m[1] as string);
      return [...headings, ...titles];
    };
    const known: Record<string, string[]> = {};
    for (const doc of ['API.md', 'ARCHITECTURE.md', 'DECISIONS.md', 'PERFORMANCE.md']) known[doc] = names(doc);
    const files = [...SCANNED, 'test', 'bench', 'migrations']
      .flatMap(filesUnder)
      .filter((path) => /\.(ts|md|mjs)$/.test(path) && !path.includes('node_modules'));
    const unknown: string[] = [];
    let cited = 0;
    for (const path of files) {
      readFileSync(join(ROOT, path), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const m of line.matchAll(/(API|ARCHITECTURE|DECISIONS|PERFORMANCE)\.md,? ((?:"[^"]+"(?:, )?)+)/g)) {
            for (const [, name] of (m[2] as string).matchAll(/"([^"]+)"/g)) {
              cited++;
              if (!known[`${m[1]}.md`]?.some((heading) => heading.startsWith(name as string))) unknown.push(`${path}:${index + 1}: ${m[1]}.md "${name}"`);
            }
          }
        });
    }
    expect(cited).toBeGreaterThan(30);
    expect(unknown, `no such section or title:\n${unknown.join('\n')}`).toEqual([]);
  });
});
