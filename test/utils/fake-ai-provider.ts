import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake provider received: its path, headers and JSON body (null when not JSON). */
export interface ProviderRequest {
  url?: string;
  headers: IncomingHttpHeaders;
  body: { model?: string; temperature?: number; messages: { role: string; content: string }[] } | null;
}

/**
 * A fake OpenAI-compatible chat-completions provider on loopback (a port the system picks), scripted
 * by the test: `status` is answered unless `upcoming` holds statuses to answer first (one per
 * request); while `hold` is set, requests wait for it; every answer comes `delayMs` after the
 * request. A 200 carries `content` as the assistant's message, anything else a body with an
 * internal-looking detail (`upstream-secret-detail`) that must never reach a client.
 */
export interface FakeAiProvider {
  /** The base URL for AI_BASE_URL (ends in /v1). */
  readonly url: string;
  status: number;
  readonly upcoming: number[];
  hold: Promise<void> | undefined;
  /** Every request received, in order. */
  readonly requests: ProviderRequest[];
  close(): Promise<void>;
}

export async function startFakeAiProvider(options: { content: string; delayMs?: number }): Promise<FakeAiProvider> {
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', async () => {
      let body: ProviderRequest['body'] = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // Recorded as null: a test asserting on the body fails on it.
      }
      provider.requests.push({ url: req.url, headers: req.headers, body });
      open.add(res);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      if (provider.hold) await provider.hold;
      open.delete(res);
      if (res.destroyed) return;
      const answer = provider.upcoming.shift() ?? provider.status;
      const payload =
        answer === 200
          ? { choices: [{ index: 0, message: { role: 'assistant', content: options.content }, finish_reason: 'stop' }] }
          : { error: 'boom: upstream-secret-detail' };
      res.writeHead(answer, { 'Content-Type': 'application/json' }).end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const provider: FakeAiProvider = {
    url: `http://127.0.0.1:${port}/v1`,
    status: 200,
    upcoming: [],
    hold: undefined,
    requests: [],
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return provider;
}
