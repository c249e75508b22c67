import { Agent, request } from 'node:http';
import type { ReceivedResponse } from './response-checker.js';

/** A request exactly as it goes on the wire (the path already percent-encoded). */
export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export class RequestTimeoutError extends Error {}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/**
 * Sends one request to 127.0.0.1 with node:http rather than fetch: fetch refuses a body on GET/HEAD,
 * methods such as SEARCH and bytes that are not UTF-8, all of which the fuzzer wants to send.
 * No answer within `timeoutMs` rejects with RequestTimeoutError: a hang is a failure too.
 */
export function send(port: number, wire: WireRequest, timeoutMs: number): Promise<ReceivedResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...wire.headers };
    if (wire.body !== undefined) headers['content-length'] = String(wire.body.length);
    const req = request({ host: '127.0.0.1', port, method: wire.method, path: wire.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => req.destroy(new RequestTimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      reject(error);
    }
    req.on('error', fail);
    req.end(wire.body);
  });
}

export function closeAgent(): void {
  agent.destroy();
}

/**
 * Percent-encodes a JavaScript string for a path segment or a query component, byte by byte, as
 * WTF-8: a lone surrogate (which UTF-8 cannot carry and encodeURIComponent refuses) becomes the
 * three bytes a naive client would send, e.g. "\ud83d" → %ED%A0%BD.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    let codePoint = unit;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        codePoint = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
        i++;
      }
    }
    if (codePoint < 0x80 && /[A-Za-z0-9\-._~]/.test(String.fromCharCode(codePoint))) {
      out += String.fromCharCode(codePoint);
      continue;
    }
    for (const byte of wtf8(codePoint)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function wtf8(codePoint: number): number[] {
  if (codePoint < 0x80) return [codePoint];
  if (codePoint < 0x800) return [0xc0 | (codePoint >> 6), 0x80 | (codePoint & 0x3f)];
  if (codePoint < 0x10000) return [0xe0 | (codePoint >> 12), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
  return [0xf0 | (codePoint >> 18), 0x80 | ((codePoint >> 12) & 0x3f), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
}
