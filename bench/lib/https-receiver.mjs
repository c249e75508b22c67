// A keep-alive HTTPS receiver for the deliveries scenario, in its own process (so its CPU is not the
// scenario's): answers 204 to every POST. Prints its port on stdout. Args: key file, cert file.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const [keyFile, certFile] = process.argv.slice(2);
const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile), keepAlive: true, keepAliveTimeout: 60_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(204);
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(String(server.address().port)));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
