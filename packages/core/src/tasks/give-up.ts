import type { TaskId } from "../domain/ids.js";
import { TaskStateError } from "../domain/errors.js";
import { longTimeout } from "./long-timeout.js";

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
  let cancel = (): void => undefined;
  const expired = new Promise<false>((resolve) => {
    cancel = longTimeout(() => resolve(false), ms);
  });
  try {
    while (work.size > 0) {
      const settled = await Promise.race([Promise.allSettled([...work]).then(() => true), expired]);
      if (!settled) return false;
    }
    return true;
  } finally {
    cancel();
  }
}

/** A run as far as giving up on it goes: the call in progress, and whether it is the abort handler. */
interface GivableRun {
  readonly call?: CallLatch;
  readonly inAbortHandler: boolean;
}

/**
 * Waits up to `ms` for `work` to settle; then gives up on the call in
 * progress of every run still going (`report` is told each), and resolves
 * with their task ids, ascending. A run between calls is on the commit
 * line, which settles by itself.
 */
export async function giveUpAfterGrace(
  runs: ReadonlyMap<number, GivableRun>,
  work: ReadonlySet<Promise<unknown>>,
  ms: number,
  report: (id: TaskId) => void,
): Promise<TaskId[]> {
  if (await settledWithin(work, ms)) return [];
  const given: TaskId[] = [];
  for (const [id, run] of runs) {
    if (!run.call) continue;
    run.call.giveUp();
    given.push(id as TaskId);
    report(id as TaskId);
  }
  return given.sort((a, b) => a - b);
}

/** Timers that give up on a phase still running `ms` after abort was requested for its task. */
export class AbortGrace {
  private readonly timers = new Map<number, () => void>();

  constructor(
    private readonly ms: number,
    /** Whether `run` is still the task's current run. */
    private readonly current: (id: number, run: GivableRun) => boolean,
    private readonly report: (id: TaskId) => void,
  ) {}

  arm(id: number, run: GivableRun): void {
    this.clear(id);
    const cancel = longTimeout(
      () => {
        this.timers.delete(id);
        if (!this.current(id, run) || run.inAbortHandler || !run.call) return;
        run.call.giveUp();
        this.report(id as TaskId);
      },
      this.ms,
      true,
    );
    this.timers.set(id, cancel);
  }

  /** The run ended: its timer, if any, is dropped. */
  clear(id: number): void {
    this.timers.get(id)?.();
    this.timers.delete(id);
  }
}

/** What `onError` hears of a run that `stop()` gave up on. */
export function notStoppedError(id: TaskId, graceMs: number): TaskStateError {
  return new TaskStateError(
    `task ${id} did not stop within ${graceMs} ms after its signal aborted; the scheduler gave up on it: it stays as stored and resumes at the next start`,
  );
}
