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

/**
 * String constants of a piece of code by the name they are bound to: `key: 'x'` (an object's
 * property), `const KEY = 'x'`, `for (const key of ['x', 'y'])`, and `key: o.other.replace('a', 'b')`
 * (derived from the constants bound to `other`). A template `${o.key}` may stand for any of them.
 */
export function stringConstants(code: string): Map<string, Set<string>> {
  const text = withoutComments(code);
  const found = new Map<string, Set<string>>();
  const add = (key: string, value: string) => found.set(key, (found.get(key) ?? new Set()).add(value));
  for (const m of text.matchAll(/\b(\w+)\s*[:=]\s*'([a-z][a-z0-9_]*)'(?=\s*[,;}\n)\]])/g)) add(m[1], m[2]);
  for (const m of text.matchAll(/\bconst\s+(\w+)\s+of\s+\[([^\]]*)\]/g)) for (const v of m[2].matchAll(/'([a-z][a-z0-9_]*)'/g)) add(m[1], v[1]);
  for (const m of text.matchAll(/\b(\w+)\s*:\s*[\w.]*?\b(\w+)\.replace\('([^']*)',\s*'([^']*)'\)/g)) {
    for (const v of found.get(m[2]) ?? []) add(m[1], v.replace(m[3], m[4]));
  }
  return found;
}

const SQL_KEYWORD = String.raw`\b(DELETE\s+FROM|FROM|JOIN|INTO|UPDATE|TABLE)\s+`;
const SQL_TABLE = new RegExp(`${SQL_KEYWORD}"?([a-z][a-z0-9_]*)"?`, 'g');
/** A table named by a template: `FROM ${t.rows}`, `INTO ${shape.table}`, `TABLE ${r.hours.replace('_hours', '_days')}`. */
const SQL_TEMPLATE_TABLE = new RegExp(`${SQL_KEYWORD}\\$\\{\\s*([\\w.]+?)(?:\\.replace\\('([^']*)',\\s*'([^']*)'\\))?\\s*\\}`, 'g');

/** The tables a template `${expr}` may stand for: the string constants bound to the last name of `expr`. */
function templateTables(constants: Map<string, Set<string>>, expr: string, from?: string, to?: string): string[] {
  const key = expr.split('.').pop() as string;
  return [...(constants.get(key) ?? [])].map((v) => (from === undefined ? v : v.replace(from, to ?? '')));
}

const REPOSITORY_USE = [
  /\b(?:getRepository|InjectRepository|createQueryBuilder)\(\s*(\w+)/g,
  /\bforFeature\(\s*\[([^\]]*)\]/g,
];
const MANAGER_USE = /\bmanager\.(find\w*|count\w*|exists\w*|insert|update|delete|save|upsert|increment|decrement|remove|softDelete|restore)\(\s*(\w+)/g;

const accessOf = (keyword: string): Access => (/^(FROM|JOIN)$/i.test(keyword) ? 'read' : 'write');

/**
 * The tables a piece of code touches, and how: SQL naming them after FROM or JOIN (read), INTO,
 * UPDATE, DELETE FROM or TABLE (write) — only names in `tables`, so SQL words and aliases after
 * those keywords are ignored — in plain text or through a template (`FROM ${t.rows}`: each string
 * constant bound to `rows` in the same code, see stringConstants); any other string constant that
 * holds a table's name (a read at least); and entity classes' repositories: `getRepository(Trigger)`,
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
    if (tables.has(m[2])) add(m[2], accessOf(m[1].replace(/\s+/g, ' ')));
  }
  const constants = stringConstants(code);
  for (const m of text.matchAll(SQL_TEMPLATE_TABLE)) {
    for (const table of templateTables(constants, m[2], m[3], m[4])) if (tables.has(table)) add(table, accessOf(m[1].replace(/\s+/g, ' ')));
  }
  for (const values of constants.values()) for (const value of values) if (tables.has(value)) add(value, 'read');
  for (const pattern of REPOSITORY_USE) {
    for (const m of text.matchAll(pattern)) for (const name of m[1].split(',')) add(entities.get(name.trim()), 'write');
  }
  for (const m of text.matchAll(MANAGER_USE)) add(entities.get(m[2]), /^(find|count|exists)/.test(m[1]) ? 'read' : 'write');
  return touched;
}

/** The tables created by the migrations' SQL, named in the text or through a template (`CREATE TABLE ${t.sketches}`). */
export function migrationTables(code: string): Set<string> {
  const text = withoutComments(code);
  const created = new Set([...text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_]+)/g)].map((m) => m[1]));
  const constants = stringConstants(code);
  for (const m of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?\$\{\s*([\w.]+?)(?:\.replace\('([^']*)',\s*'([^']*)'\))?\s*\}/g)) {
    for (const table of templateTables(constants, m[1], m[2], m[3])) created.add(table);
  }
  return created;
}
