/**
 * Bounded waits for code that may ignore its abort signal: a phase or an
 * abort handler whose promise never settles would otherwise hold a
 * scheduler's stop (and a harness's close) or an abort forever. The
 * scheduler waits a grace period, then gives up on the call: it stops
 * awaiting it and revokes its runtime, so whatever the call does later can
 * store nothing.
 */

/** One phase or abort-handler call that the scheduler may give up on. */
export class CallLatch {
  private fire!: () => void;
  private fired = false;
  /** Resolves once the scheduler gives up on the call. */
  readonly given: Promise<void> = new Promise((resolve) => (this.fire = resolve));

  /** Whether the scheduler gave up on the call. */
  get givenUp(): boolean {
    return this.fired;
  }

  giveUp(): void {
    this.fired = true;
    this.fire();
  }
}

/** What `unlessGivenUp` resolves with when the scheduler gave up first. */
export const GAVE_UP: unique symbol = Symbol("gave up");

/**
 * Settles like `call`, unless `latch` fires first: then resolves `GAVE_UP`.
 * A rejection of the abandoned call later goes to `late` (nobody awaits it
 * any more, and it must not surface as an unhandled rejection).
 */
export function unlessGivenUp<T>(
  call: Promise<T>,
  latch: CallLatch,
  late: (error: unknown) => void,
): Promise<T | typeof GAVE_UP> {
  call.catch((error: unknown) => {
    if (latch.givenUp) late(error);
  });
  const gaveUp: Promise<typeof GAVE_UP> = latch.given.then(() => GAVE_UP);
  return Promise.race([call, gaveUp]);
}

/** Resolves true once every promise in `work` (a live set) has settled, false after `ms` if some have not. */
export async function settledWithin(
  work: ReadonlySet<Promise<unknown>>,
  ms: number,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    while (work.size > 0) {
      const settled = await Promise.race([Promise.allSettled([...work]).then(() => true), expired]);
      if (!settled) return false;
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}
