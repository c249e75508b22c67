import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait-for.js';
import { stopProcess } from './worker-process.js';

/**
 * PostgreSQL and Redis instances of a test's own, on free loopback ports, which the test may stop,
 * kill and start again: the shared instances on 5432 and 6379 serve every other test run on the
 * machine and must never be stopped. Each helper's `cleanup()` is safe to call twice and after a
 * failed start; call it in afterAll.
 */

const run = promisify(execFile);

/** A free TCP port on loopback (free when asked: bind it soon). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => done(true));
  });
}

/** A redis-server of the test's own (no persistence): `stop()` ends it, `start()` brings it back on the same port, empty. */
export class PrivateRedis {
  private child?: ChildProcess;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
    this.child = child;
    await waitFor(`redis-server on ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
      return accepts(this.port);
    }, 10_000, 50);
  }

  /** SIGTERM (SIGKILL after 5 s); resolves once the process has exited. */
  async stop(): Promise<void> {
    if (this.child) await stopProcess(this.child, 5000);
  }

  async cleanup(): Promise<void> {
    await this.stop();
  }
}

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL cluster of the test's own in a temporary directory (initdb, trust authentication,
 * user postgres), listening on 127.0.0.1 only. We run as root (as CI does), and PostgreSQL refuses
 * to run as root: the cluster belongs to the postgres user and its tools run through runuser.
 */
export class PrivatePostgres {
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'was-pg-'));
    const pg = new PrivatePostgres(await freePort(), dir);
    try {
      const { uid, gid } = await postgresIds();
      chownSync(dir, uid, gid);
      await pg.asPostgres('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
      await pg.start();
      return pg;
    } catch (error) {
      await pg.cleanup();
      throw error;
    }
  }

  /** The URL of a database on this cluster. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    await this.pgCtl(['start', '-w', '-t', '30', '-l', join(this.dir, 'log'), '-o', this.serverOptions()]);
  }

  /** Fast shutdown: open sessions are ended, as an operator's restart or a failover does. */
  async stop(): Promise<void> {
    await this.pgCtl(['stop', '-w', '-t', '30', '-m', 'fast']);
  }

  async running(): Promise<boolean> {
    try {
      await this.pgCtl(['status']);
      return true;
    } catch {
      return false;
    }
  }

  async cleanup(): Promise<void> {
    try {
      if (await this.running()) await this.pgCtl(['stop', '-w', '-t', '30', '-m', 'immediate']);
    } catch {
      // Nothing more to stop.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private serverOptions(): string {
    // No fsync: the cluster is thrown away; small shared memory so that several fit beside the shared one.
    return `-p ${this.port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c shared_buffers=32MB -c max_connections=60`;
  }

  private pgCtl(args: string[]): Promise<unknown> {
    return this.asPostgres('pg_ctl', ['-D', join(this.dir, 'data'), ...args]);
  }

  private asPostgres(tool: string, args: string[]): Promise<unknown> {
    const command = join(PG_BIN, tool);
    return process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 60_000 }) : run(command, args, { timeout: 60_000 });
  }
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  if (process.getuid?.() !== 0) return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
