/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. Bounded by design. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined | false;
  while (Date.now() < deadline) {
    last = await check();
    if (last !== undefined && last !== false) return last;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}
