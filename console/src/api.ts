import type { paths } from './api-types';
import { accessToken } from './auth';

/** Typed calls of the public API, from the types generated from the served /openapi.json (api-types.d.ts). */

type Method = 'get' | 'post' | 'put' | 'delete';
type Op<P extends keyof paths, M extends Method> = paths[P] extends Record<M, infer O> ? (O extends undefined | never ? never : O) : never;
type PathsWith<M extends Method> = { [P in keyof paths]: Op<P, M> extends never ? never : P }[keyof paths];
type Content<R> = R extends { content: { 'application/json': infer T } } ? T : undefined;
type Ok<O> = O extends { responses: infer R } ? Content<R[keyof R & (200 | 201 | 202)]> : never;
type Params<O, K extends 'query' | 'path'> = O extends { parameters: { [k in K]?: infer Q } } ? (Q extends undefined ? never : Q) : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export interface Options<O> {
  path?: Params<O, 'path'>;
  query?: Params<O, 'query'>;
  body?: Body<O>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A 403 SCOPE_INSUFFICIENT: the user may be asked for the scope (auth.askFor). */
export const needsScope = (e: unknown) => e instanceof ApiError && e.code === 'SCOPE_INSUFFICIENT';

function url(template: string, path: Record<string, unknown> = {}, query: Record<string, unknown> = {}): string {
  const p = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(path[name])));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, String(x)));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `${p}?${s}` : p;
}

export let onSignedOut: () => void = () => {};
export const setOnSignedOut = (f: () => void) => (onSignedOut = f);

export async function raw(method: string, target: string, body?: unknown): Promise<Response> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const token = await accessToken(attempt > 0);
    if (!token) {
      onSignedOut();
      throw new ApiError(401, 'SIGNED_OUT', 'Signed out');
    }
    const res = await fetch(target, {
      method: method.toUpperCase(),
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status === 401 && attempt === 0) continue;
    if (!res.ok) {
      const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
      if (res.status === 401) onSignedOut();
      throw new ApiError(res.status, json.error?.code ?? 'HTTP_' + res.status, json.error?.message ?? res.statusText);
    }
    return res;
  }
  throw new ApiError(401, 'SIGNED_OUT', 'Signed out');
}

async function call<M extends Method, P extends PathsWith<M>>(method: M, path: P, options: Options<Op<P, M>> = {}): Promise<Ok<Op<P, M>>> {
  const o = options as { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
  const res = await raw(method, url(path as string, o.path, o.query), o.body ?? (method === 'post' ? {} : undefined));
  return (res.status === 204 ? undefined : await res.json()) as Ok<Op<P, M>>;
}

export const api = {
  get: <P extends PathsWith<'get'>>(path: P, options?: Options<Op<P, 'get'>>) => call('get', path, options),
  post: <P extends PathsWith<'post'>>(path: P, options?: Options<Op<P, 'post'>>) => call('post', path, options),
  delete: <P extends PathsWith<'delete'>>(path: P, options?: Options<Op<P, 'delete'>>) => call('delete', path, options),
};

/** A file of the API (report downloads) fetched with the token, handed to the browser as a download. */
export async function download(target: string, name: string): Promise<void> {
  const res = await raw('get', target);
  const blob = await res.blob();
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
