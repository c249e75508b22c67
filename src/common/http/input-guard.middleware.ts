import type { NextFunction, Request, Response } from 'express';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../errors/common.errors.js';
import { findInputFault, inputFaultMessage, unstorableReason } from '../validation/storable-input.js';

/** A media type as matched by `acceptsMediaType`: exact (`application/json`), `text/*`, a suffix `+json`, or "any" (the pattern star-slash-star, no type included). */
export type MediaPattern = string;

/** The body media types of the routes that take something else than JSON; every other route takes JSON only. */
export interface BodyMediaRule {
  path: RegExp;
  /** Upper-case methods; all when absent. */
  methods?: readonly string[];
  accepts: readonly MediaPattern[];
}

export const JSON_MEDIA_TYPES: readonly MediaPattern[] = ['application/json', '+json'];

/** The bare, lower-case media type of a Content-Type header (no parameters). */
export function mediaTypeOf(contentType: string | undefined): string {
  if (!contentType) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

export function acceptsMediaType(mediaType: string, accepted: readonly MediaPattern[]): boolean {
  return accepted.some((pattern) => {
    if (pattern === '*/*') return true;
    if (pattern.startsWith('+')) return mediaType.startsWith('application/') && mediaType.endsWith(pattern);
    if (pattern.endsWith('/*')) return mediaType.startsWith(pattern.slice(0, -1));
    return mediaType === pattern;
  });
}

/** Whether the request carries a body: chunked, or a Content-Length above 0 (a bare POST sends 0 or none). */
export function hasBody(req: Pick<Request, 'headers'>): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0' && length.trim() !== '0';
}

/**
 * 415 UNSUPPORTED_MEDIA_TYPE for a body whose Content-Type the route does not take, before any
 * body parser runs. Without it a form or text body on a JSON route was parsed into something
 * else and refused with a misleading "unknown property". Requests without a body (activate,
 * pause, ...) pass whatever their Content-Type.
 */
export function bodyMediaTypeMiddleware(rules: readonly BodyMediaRule[]) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!hasBody(req)) return next();
    const mediaType = mediaTypeOf(req.headers['content-type']);
    const rule = rules.find((r) => r.path.test(req.path) && (!r.methods || r.methods.includes(req.method)));
    const accepted = rule?.accepts ?? JSON_MEDIA_TYPES;
    if (acceptsMediaType(mediaType, accepted)) return next();
    next(new UnsupportedMediaTypeError(mediaType === '' ? '(none)' : mediaType, accepted.map((p) => (p.startsWith('+') ? `application/*${p}` : p))));
  };
}

/**
 * 400 INVALID_REQUEST, with the field, for a NUL or a lone surrogate anywhere in the parsed body
 * (values and keys, any depth), the query (names and values), or a body nested deeper than
 * MAX_JSON_DEPTH. Runs after the body parsers and before routing, so it covers every route,
 * including the public ones. Path parameters are only known after routing: the validation pipe
 * checks those (see AppValidationPipe).
 */
export function storableInputMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  if (body !== undefined) {
    const fault = findInputFault(body, undefined, typeof body === 'string' ? 'body' : '');
    if (fault) return next(new InvalidRequestError(inputFaultMessage(fault), fault.field === '' ? undefined : fault.field));
  }
  // Express 5 parses the query string again on every read of req.query (a getter): read it once,
  // and keep the result as the request's own property, so that the validation pipe and the
  // handlers read it without parsing it again.
  if (req.url.includes('?')) {
    const query = req.query as Record<string, unknown>;
    Object.defineProperty(req, 'query', { value: query, writable: true, configurable: true, enumerable: true });
    for (const name of Object.keys(query)) {
      const nameFault = unstorableReason(name);
      const fault = nameFault ? { reason: nameFault, field: name } : findInputFault(query[name], undefined, name);
      // A repeated parameter is an array; its name is the field, not name[1].
      if (fault) return next(new InvalidRequestError(inputFaultMessage({ ...fault, field: name }), name));
    }
  }
  next();
}
