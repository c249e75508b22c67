// Preload for the app under test (BENCH_APP_NODE_ARGS="--import ./bench/alloc-sampler.mjs"): a sampling heap
// profile of everything ALLOCATED (objects the GC already collected included, unlike --heap-prof, which
// reports only what is still live), from ALLOC_SAMPLER_DELAY_S seconds after start (default 15, past the
// start-up) until exit, written to ALLOC_SAMPLER_DIR (default /tmp/allocprof) as <pid>.heapprofile.
// `node bench/alloc-sites.mjs <file> [requests]` folds it into allocation sites (docs/PERFORMANCE.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const dir = process.env.ALLOC_SAMPLER_DIR ?? '/tmp/allocprof';
const session = new Session();
session.connect();
let started = false;
setTimeout(() => {
  session.post('HeapProfiler.startSampling', { samplingInterval: Number(process.env.ALLOC_SAMPLER_INTERVAL ?? 8192), includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }, (err) => {
    if (err) console.error('alloc-sampler:', err.message);
    else started = true;
  });
}, Number(process.env.ALLOC_SAMPLER_DELAY_S ?? 15) * 1000).unref();
// A same-thread inspector session answers synchronously, so this works from 'exit'.
process.on('exit', () => {
  if (!started) return;
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return console.error('alloc-sampler:', err.message);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/${process.pid}.heapprofile`, JSON.stringify(result.profile));
  });
});
