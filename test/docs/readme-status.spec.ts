import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The README's "What is built and what is not yet" table names features (not issue numbers) and stays
 * true for the routes it names: each
 * `METHOD /path` of a "built" row is served, each of a "not yet" row is not, according to
 * docs/ROUTES.md (generated from the controllers by src/auth/routes.spec.ts).
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

function servedRoutes(): Set<string> {
  const routes = new Set<string>();
  for (const match of read('docs/ROUTES.md').matchAll(/^\| (GET|POST|PUT|PATCH|DELETE|ALL) \| `([^`]+)` \|/gm)) routes.add(`${match[1]} ${match[2]}`);
  return routes;
}

function statusRows(): { feature: string; state: string; routes: string[] }[] {
  const readme = read('README.md');
  const start = readme.indexOf('## What is built and what is not yet');
  expect(start, 'the README has no "What is built and what is not yet" section').toBeGreaterThan(0);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| feature') && !line.startsWith('|---'))
    .map((line) => {
      const [feature, state] = line.split(' | ').map((cell) => cell.replace(/^\| /, '').trim());
      const routes = [...feature.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]*)`/g)].map((m) => `${m[1]} ${m[2]}`);
      return { feature, state, routes };
    });
}

describe("the README's status table", () => {
  it('has rows in one of two states', () => {
    const rows = statusRows();
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) expect(['built', 'not yet'], row.feature).toContain(row.state);
  });

  it('names features, not issue numbers or dated runs (the history is in git)', () => {
    for (const row of statusRows()) {
      expect(row.feature, 'a feature, not an issue').not.toMatch(/\bissues? #?\d+|\bdefects? \d+/i);
      expect(row.feature, 'a feature, not a design-card section').not.toMatch(/§/);
    }
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## What is built and what is not yet'));
    const table = section.slice(0, section.indexOf('\n## ', 1));
    expect(table, 'no dated figures in the status table: they belong in docs/PERFORMANCE.md').not.toMatch(/\b20\d\d-\d\d-\d\d\b/);
  });

  it('names routes that are served when built and not served when not yet', () => {
    const served = servedRoutes();
    expect(served.size).toBeGreaterThan(50);
    const rows = statusRows();
    expect(rows.flatMap((r) => r.routes).length).toBeGreaterThan(15);
    for (const row of rows) {
      for (const route of row.routes) {
        if (row.state === 'built') expect(served.has(route) || served.has(route.replace(/^POST /, 'ALL ')), `${route} is marked built but not served`).toBe(true);
        else expect(served.has(route), `${route} is served: move "${row.feature}" to built`).toBe(false);
      }
    }
  });
});
