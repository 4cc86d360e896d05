/** The longest delay `setTimeout` honours: Node and browsers run a longer one after 1 ms. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * `setTimeout` for any finite delay: one longer than `MAX_TIMEOUT_MS`
 * (about 24.8 days: a month's `rt.sleep`, a large `stopGraceMs`) is waited
 * in steps, never cut to 1 ms. `unref`: the wait keeps no process alive.
 * Returns the canceller.
 */
export function longTimeout(fn: () => void, ms: number, unref = false): () => void {
  let left = ms;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    const step = Math.min(left, MAX_TIMEOUT_MS);
    left -= step;
    timer = setTimeout(() => (left > 0 ? arm() : fn()), step);
    if (unref) (timer as { unref?: () => void }).unref?.();
  };
  arm();
  return () => clearTimeout(timer);
}
