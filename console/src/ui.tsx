import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, needsScope } from './api';
import { askFor } from './auth';

/** Client-side navigation under /console/. */
export function navigate(to: string): void {
  history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function Link(props: { href: string; children: ComponentChildren; class?: string }) {
  return (
    <a
      href={props.href}
      class={props.class}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

export interface Loaded<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when a dependency changes; the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? `${error.code}: ${error.message}` : String((error as Error)?.message ?? error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** Shows a load's error or a loading line, else its content. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (loaded.data === undefined) return <p class="muted">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

/**
 * A button for an action that changes something. Without the scope it needs, the first click says
 * so and offers to ask for it (the consent page again, coming back here).
 */
export function Action(props: { scope: string; label: string; run: () => Promise<unknown>; done?: () => void; class?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [missing, setMissing] = useState(false);
  return (
    <span class="action">
      <button
        type="button"
        class={props.class}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          try {
            await props.run();
            props.done?.();
          } catch (e) {
            if (needsScope(e)) setMissing(true);
            else setError(e);
          } finally {
            setBusy(false);
          }
        }}
      >
        {props.label}
      </button>
      {missing && (
        <span class="notice" role="status">
          This needs permission to change ({props.scope}).{' '}
          <button type="button" onClick={() => void askFor(props.scope)}>
            Allow changes
          </button>
        </span>
      )}
      <ErrorBox error={error} />
    </span>
  );
}

/**
 * Cursor pages: the API's `next_cursor` moves forward, a stack of the cursors seen moves back.
 * No page count is needed, so a list of a million rows costs what its first page costs.
 */
export function usePager(reset: unknown[]) {
  const [stack, setStack] = useState<string[]>([]);
  useEffect(() => setStack([]), reset);
  const after = stack[stack.length - 1];
  return {
    after,
    page: stack.length + 1,
    Pager: ({ next }: { next?: string | null }) => (
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={stack.length === 0} onClick={() => setStack(stack.slice(0, -1))}>
          Previous
        </button>
        <span>Page {stack.length + 1}</span>
        <button type="button" disabled={!next} onClick={() => next && setStack([...stack, next])}>
          Next
        </button>
      </nav>
    ),
  };
}

export const fmtDate = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
export const pct = (v?: number | null) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`);
export const ms = (v?: number | null) => (v === null || v === undefined ? '—' : `${Math.round(v)} ms`);

export function Json({ value }: { value: unknown }) {
  // Focusable: a long document scrolls, and the keyboard must reach it.
  return (
    <pre class="json" tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/**
 * A labelled select of fixed choices (`[value, text]`, or a value shown as itself); `onChange` gets one
 * of the values. The filters and forms of the pages.
 */
export function Choice<T extends string>(props: { label: string; name: string; value: T; choices: readonly (T | readonly [T, string])[]; onChange: (value: T) => void }) {
  return (
    <label>
      {props.label}{' '}
      <select name={props.name} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T)}>
        {props.choices.map((c) => {
          const [value, text] = typeof c === 'string' ? [c, c] : c;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** Numbered pages, for the lists whose API takes `page` only (bounded by the API's limit per page). */
export function usePages(reset: unknown[]) {
  const [page, setPage] = useState(1);
  useEffect(() => setPage(1), reset);
  return {
    page,
    Pager: ({ pages }: { pages: number }) => (
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {page} of {Math.max(1, pages)}
        </span>
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    ),
  };
}
