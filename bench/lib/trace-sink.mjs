// BENCH_TRACING=1: an OTLP/HTTP collector on loopback in the bench process that counts what it
// receives and keeps nothing, so that the app under test runs with traces on (its spans exported
// for real, over HTTP) and the figures price tracing. One sink for the whole run.
import { createServer } from 'node:http';

let sink;

/** Starts the sink once; resolves to { url, stats } (stats: requests and bytes received so far). */
export function traceSink() {
  sink ??= new Promise((resolve, reject) => {
    const stats = { requests: 0, bytes: 0 };
    const server = createServer((req, res) => {
      req.on('data', (chunk) => (stats.bytes += chunk.length));
      req.on('end', () => {
        stats.requests += 1;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    server.on('error', reject);
    // Never keeps the bench alive by itself.
    server.unref();
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, stats }));
  });
  return sink;
}
