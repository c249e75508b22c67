// Folds a sampling heap profile (bench/alloc-sampler.mjs) into bytes allocated per site: self bytes by
// function (file:line) and by package / our file, and per request when the request count is given:
//   node bench/alloc-sites.mjs /tmp/allocprof/<pid>.heapprofile 40000 [top]
import { readFileSync } from 'node:fs';
const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const requests = Number(process.argv[3] ?? 0);
const top = Number(process.argv[4] ?? 40);
const bySite = new Map();
const byModule = new Map();
let total = 0;
const where = (cf) => {
  const u = cf.url || '';
  const m = u.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/);
  if (m) return [m[1], `${m[1]}/${m[2].split('/').pop()}`];
  const d = u.match(/dist\/(.*)$/);
  if (d) return [`app:${d[1]}`, `app:${d[1]}`];
  return [u || `(${cf.functionName || 'native'})`, u || '(native)'];
};
(function walk(node, stack) {
  const self = node.selfSize;
  if (self > 0) {
    total += self;
    const [mod, file] = where(node.callFrame);
    const site = `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}  <- ${stack.slice(-3).reverse().join(' <- ')}`;
    bySite.set(site, (bySite.get(site) ?? 0) + self);
    byModule.set(mod, (byModule.get(mod) ?? 0) + self);
  }
  const name = `${node.callFrame.functionName || '(anon)'}@${where(node.callFrame)[1].split('/').pop()}:${node.callFrame.lineNumber + 1}`;
  for (const c of node.children) walk(c, [...stack, name]);
})(profile.head, []);
const fmt = (b) => (requests ? `${(b / requests / 1024).toFixed(2)} KB/req` : `${(b / 1048576).toFixed(1)} MB`);
console.log(`total ${fmt(total)}`);
console.log('\nby package / file:');
for (const [m, b] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(b).padStart(14)}  ${(100 * b / total).toFixed(1).padStart(5)}%  ${m}`);
console.log('\nby site:');
for (const [s, b] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(b).padStart(14)}  ${(100 * b / total).toFixed(1).padStart(5)}%  ${s}`);
