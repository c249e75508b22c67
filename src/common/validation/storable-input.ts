/**
 * Input the database cannot store, found once for the whole request before any validation.
 *
 * PostgreSQL refuses NUL (`\u0000`) in text and jsonb (22021 / 22P05) and a lone UTF-16 surrogate
 * (which JSON allows, as `\ud83d`) in any UTF-8 column; both used to surface as 500s from whichever
 * statement met them first. Nesting is bounded so that nothing recursive downstream
 * (class-transformer, JSON.stringify, jsonb) can run out of stack.
 */

/** Deepest nesting of arrays and objects a request body may have (the top-level object is 1). */
export const MAX_JSON_DEPTH = 64;

export type InputFaultReason = 'nul' | 'surrogate' | 'depth';

export interface InputFault {
  reason: InputFaultReason;
  /** Dot path of the offending value or key (`configuration.nodes[0].content`); '' for the root. */
  field: string;
}

/** Why a string cannot be stored, or undefined when it can. Two native scans: cheap on the hot path. */
export function unstorableReason(value: string): 'nul' | 'surrogate' | undefined {
  if (value.includes('\u0000')) return 'nul';
  if (!isWellFormed(value)) return 'surrogate';
  return undefined;
}

type WellFormed = (this: string) => boolean;
const nativeIsWellFormed = (String.prototype as unknown as { isWellFormed?: WellFormed }).isWellFormed;

/** `String.prototype.isWellFormed` (Node 20+), with a scan where it is missing. */
function isWellFormed(value: string): boolean {
  if (nativeIsWellFormed) return nativeIsWellFormed.call(value);
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit > 0xdbff) return false;
    const next = value.charCodeAt(i + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
    i++;
  }
  return true;
}

/** A container being walked; `parent`/`key` rebuild the path only when a fault is found. */
interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number | undefined;
}

/**
 * The first fault in a parsed JSON (or form/query) value: a NUL or lone surrogate in a string or an
 * object key, or containers nested deeper than `maxDepth`. Iterative (an explicit stack), so a
 * hostile nesting cannot exhaust the call stack here either.
 */
export function findInputFault(value: unknown, maxDepth: number = MAX_JSON_DEPTH, root = ''): InputFault | undefined {
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    return reason ? { reason, field: root } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;

  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > maxDepth) return { reason: 'depth', field: pathOf(frame, root) };
    if (Array.isArray(frame.value)) {
      const items = frame.value as unknown[];
      for (let i = 0; i < items.length; i++) {
        const fault = visit(items[i], frame, i, stack, root);
        if (fault) return fault;
      }
    } else {
      for (const key of Object.keys(frame.value)) {
        const keyReason = unstorableReason(key);
        if (keyReason) return { reason: keyReason, field: pathOf({ value: {}, depth: 0, parent: frame, key }, root) };
        const fault = visit((frame.value as Record<string, unknown>)[key], frame, key, stack, root);
        if (fault) return fault;
      }
    }
  }
  return undefined;
}

function visit(child: unknown, parent: Frame, key: string | number, stack: Frame[], root: string): InputFault | undefined {
  if (typeof child === 'string') {
    const reason = unstorableReason(child);
    return reason ? { reason, field: pathOf({ value: {}, depth: 0, parent, key }, root) } : undefined;
  }
  if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: parent.depth + 1, parent, key });
  return undefined;
}

/** `root.a.b[0].c`, built from the frame up to the walk's root. */
function pathOf(frame: Frame, root: string): string {
  const keys: (string | number)[] = [];
  for (let f: Frame | undefined = frame; f && f.key !== undefined; f = f.parent) keys.push(f.key);
  let path = root;
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i];
    path = typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
  }
  return path;
}

/** The client-facing message of a fault. */
export function inputFaultMessage(fault: InputFault): string {
  const where = fault.field === '' ? 'The request body' : fault.field;
  switch (fault.reason) {
    case 'nul':
      return `${where} must not contain NUL characters`;
    case 'surrogate':
      return `${where} must not contain unpaired UTF-16 surrogates`;
    case 'depth':
      return `The request body is nested deeper than ${MAX_JSON_DEPTH} levels`;
  }
}
