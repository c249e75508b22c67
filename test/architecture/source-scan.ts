import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Every .ts file under `dir` (recursively), specs left out: they may reach into any table to check it. */
export function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) files.push(path);
  }
  return files;
}

/** Every .ts file under `dir` (recursively), specs included. */
export function allSourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...allSourceFiles(path));
    else if (entry.name.endsWith('.ts')) files.push(path);
  }
  return files;
}

/**
 * The relative module specifiers a file imports or re-exports (`import … from './x.js'`,
 * `import './x.js'`, `export … from`, `import('./x.js')`), comments left out. Package imports are not listed.
 */
export function relativeImports(code: string): string[] {
  const text = withoutComments(code);
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*)\1/g)) found.push(m[2]);
  return found;
}

/** Where a relative import of `file` points, relative to `root` (`../src/x.js` from migrations/a.ts → `src/x.js`). */
export function importTarget(root: string, file: string, specifier: string): string {
  return relative(root, resolve(dirname(file), specifier));
}

/** The module a file belongs to: its folder under src (`src/triggers/dto/x.ts` → `triggers`); files at the root belong to `app`. */
export function moduleOf(srcDir: string, file: string): string {
  const parts = relative(srcDir, file).split(sep);
  return parts.length === 1 ? 'app' : parts[0];
}

/**
 * The code without its comments, so that prose ("reads FROM triggers") is not taken for SQL.
 * Strings are kept whole (a `//` inside one, as in a URL, is not a comment).
 */
export function withoutComments(code: string): string {
  let out = '';
  let i = 0;
  let quote: string | null = null;
  while (i < code.length) {
    const c = code[i];
    if (quote) {
      out += c;
      if (c === '\\') {
        out += code[i + 1] ?? '';
        i += 2;
        continue;
      }
      if (c === quote) quote = null;
      i += 1;
    } else if (c === '/' && code[i + 1] === '/') {
      while (i < code.length && code[i] !== '\n') i += 1;
    } else if (c === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      i = end < 0 ? code.length : end + 2;
    } else {
      if (c === '"' || c === "'" || c === '`') quote = c;
      out += c;
      i += 1;
    }
  }
  return out;
}

/** Entity classes and their tables, from `@Entity({ name: '...' })` followed by `export class X`. */
export function entityTables(code: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of code.matchAll(/@Entity\(\{\s*name:\s*'([a-z_]+)'[^)]*\)[\s\S]*?export class (\w+)/g)) found.set(m[2], m[1]);
  return found;
}

export type Access = 'read' | 'write';

const SQL_TABLE = /\b(DELETE\s+FROM|FROM|JOIN|INTO|UPDATE|TABLE)\s+"?([a-z][a-z0-9_]*)"?/g;
const REPOSITORY_USE = [
  /\b(?:getRepository|InjectRepository|createQueryBuilder)\(\s*(\w+)/g,
  /\bforFeature\(\s*\[([^\]]*)\]/g,
];
const MANAGER_USE = /\bmanager\.(find\w*|count\w*|exists\w*|insert|update|delete|save|upsert|increment|decrement|remove|softDelete|restore)\(\s*(\w+)/g;

/**
 * The tables a piece of code touches, and how: SQL naming them after FROM or JOIN (read), INTO,
 * UPDATE, DELETE FROM or TABLE (write) — only names in `tables`, so SQL words and aliases after
 * those keywords are ignored — and entity classes' repositories: `getRepository(Trigger)`,
 * `@InjectRepository(Trigger)` and `forFeature([Trigger])` count as writes (a repository can do
 * both), `manager.find(Trigger, …)` as a read, `manager.save(Trigger, …)` as a write.
 */
export function tablesTouched(code: string, tables: ReadonlySet<string>, entities: ReadonlyMap<string, string>): Map<string, Access> {
  const text = withoutComments(code);
  const touched = new Map<string, Access>();
  const add = (table: string | undefined, access: Access) => {
    if (table && touched.get(table) !== 'write') touched.set(table, access);
  };
  for (const m of text.matchAll(SQL_TABLE)) {
    if (tables.has(m[2])) add(m[2], m[1].toUpperCase() === 'FROM' || m[1].toUpperCase() === 'JOIN' ? 'read' : 'write');
  }
  for (const pattern of REPOSITORY_USE) {
    for (const m of text.matchAll(pattern)) for (const name of m[1].split(',')) add(entities.get(name.trim()), 'write');
  }
  for (const m of text.matchAll(MANAGER_USE)) add(entities.get(m[2]), /^(find|count|exists)/.test(m[1]) ? 'read' : 'write');
  return touched;
}

/** The tables created by the migrations' SQL. */
export function migrationTables(code: string): Set<string> {
  return new Set([...withoutComments(code).matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_]+)/g)].map((m) => m[1]));
}
