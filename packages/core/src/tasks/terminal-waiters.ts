import { UnknownRecord } from "../domain/errors.js";
import type { TaskId } from "../domain/ids.js";
import type { TaskRecord } from "../domain/records.js";
import { asError } from "./error-info.js";

type Resolvers = { resolve: (task: TaskRecord) => void; reject: (error: unknown) => void };

/**
 * In-memory waits for tasks to end (`scheduler.waitForTask`,
 * `rt.waitForTask`): who waits for which task, resolved from the stored
 * terminal commits. It also knows which task's phase awaits which task, the
 * in-memory edges of the wait-for graph.
 */
export class TerminalWaiters {
  private readonly waiters = new Map<number, Set<Resolvers>>();
  /** Task whose phase awaits -> each pending call (its waiter entry) -> the awaited task. */
  private readonly awaiting = new Map<number, Map<object, number>>();

  /**
   * Resolves with `id`'s record once a terminal commit of it is stored
   * (`resolveTerminal`), or at once when `read` finds it terminal already.
   * `caller`, when set, is the task whose phase waits (an in-memory edge
   * while the call is pending).
   */
  wait(
    id: TaskId,
    read: () => Promise<TaskRecord | undefined>,
    signal: AbortSignal | undefined,
    caller?: TaskId,
  ): Promise<TaskRecord> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<TaskRecord>((resolve, reject) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      const waiters = set;
      const onAbort = (): void => done(() => reject(signal?.reason as Error));
      const done = (settle: () => void): void => {
        if (!waiters.delete(entry)) return;
        if (waiters.size === 0 && this.waiters.get(id) === waiters) this.waiters.delete(id);
        signal?.removeEventListener("abort", onAbort);
        if (caller !== undefined) this.awaiting.get(caller)?.delete(entry);
        settle();
      };
      const entry: Resolvers = {
        resolve: (task) => done(() => resolve(task)),
        reject: (error) => done(() => reject(asError(error))),
      };
      waiters.add(entry);
      if (caller !== undefined) this.remember(caller, entry, id);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Registered before the read, so a terminal commit in between is not missed.
      read().then(
        (task) => {
          if (!task) entry.reject(new UnknownRecord(`task ${id} does not exist`));
          else if (task.state.status === "terminal") entry.resolve(task);
        },
        (error: unknown) => entry.reject(error),
      );
    });
  }

  /** A terminal commit of `task` was stored: its waiters resolve. */
  resolveTerminal(task: TaskRecord): void {
    const waiters = this.waiters.get(task.id);
    if (waiters) for (const waiter of [...waiters]) waiter.resolve(task);
  }

  /**
   * After a time without commit events (a stopped scheduler sees none):
   * each awaited task `read` finds terminal resolves its waiters. A failed
   * read leaves them waiting.
   */
  recheck(read: (id: TaskId) => Promise<TaskRecord | undefined>): void {
    for (const id of [...this.waiters.keys()])
      read(id as TaskId).then(
        (task) => {
          if (task?.state.status === "terminal") this.resolveTerminal(task);
        },
        () => undefined,
      );
  }

  /** Nothing can end these waits any more (the session failed): each rejects with `error`. */
  rejectAll(error: Error): void {
    for (const waiters of [...this.waiters.values()])
      for (const waiter of [...waiters]) waiter.reject(error);
  }

  /** The tasks the phases of `id` await now, ascending. */
  awaitsOf(id: number): readonly number[] {
    const calls = this.awaiting.get(id);
    return calls ? [...new Set(calls.values())].sort((a, b) => a - b) : [];
  }

  /**
   * The phase of `caller` returned: awaits it left pending no longer hold
   * it (they still resolve; they just stop counting as its edges).
   */
  forgetCaller(caller: number): void {
    this.awaiting.delete(caller);
  }

  private remember(caller: number, call: object, id: number): void {
    let calls = this.awaiting.get(caller);
    if (!calls) this.awaiting.set(caller, (calls = new Map<object, number>()));
    calls.set(call, id);
  }
}
