import type { TaskId } from "../domain/ids.js";
import type { TaskRecord } from "../domain/records.js";
import type { CallOptions } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import { CommitTooLarge } from "../session/value-size.js";
import type { AnyTaskDefinition } from "./define-task.js";
import type { TaskIndex } from "./task-index.js";
import { abortIn, markChildrenIn, propagatesAbort, type Stamp } from "./transitions.js";

/**
 * `abortTask`'s commit: the task and its whole live owned tree marked at
 * once. A tree whose records exceed the session's commit limit is marked
 * the task alone, its owned tasks then by the scheduler's pass (`AbortMarks`),
 * as for an owner that failed: an abort never fails for the size of what it
 * aborts.
 */
export async function abortTree(
  session: Session,
  id: TaskId,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
  stamp: Stamp,
  options?: CallOptions,
): Promise<boolean> {
  const abort = (ownedTree: boolean) =>
    session.commit((tx) => abortIn(tx, id, definitions, stamp, ownedTree), options);
  try {
    return await abort(true);
  } catch (error) {
    if (!(error instanceof CommitTooLarge)) throw error;
    return abort(false);
  }
}

/**
 * The scheduler's pass that marks the live owned tasks of an owner that
 * propagates abort and has unmarked ones (it ended other than completed,
 * tasks were created after its abort, or `abortTree` marked it alone). All
 * in one commit, or one per commit once they proved too large for one; a
 * marking commit that fails otherwise is not retried until the next start
 * (the tasks below that owner then store their own marks: `markAbortIn`).
 */
export class AbortMarks {
  private readonly unmarkable = new Set<number>();
  private readonly singly = new Set<number>();

  clear(): void {
    this.unmarkable.clear();
    this.singly.clear();
  }

  /**
   * Whether `task` must store its own abort mark (`markAbortIn`): it is not
   * marked, an owner up its chain propagates abort, and the marking commit
   * of an owner up its chain failed (else that owner's marks reach it).
   */
  ownMarkDue(task: TaskRecord, index: TaskIndex): boolean {
    // No marking commit failed (the common case): nothing to walk.
    if (this.unmarkable.size === 0 || task.abortRequested || !index.aborting(task.id)) return false;
    for (let owner = task.owner; owner !== undefined; owner = index.get(owner)?.owner)
      if (this.unmarkable.has(owner)) return true;
    return false;
  }

  /** Whether `task` has owned tasks to mark. Held (stuck) tasks too: their owned tasks must not run on unaborted. */
  due(task: TaskRecord, index: TaskIndex): boolean {
    return (
      propagatesAbort(task) &&
      !this.unmarkable.has(task.id) &&
      index.liveChildIds(task.id).some((child) => index.get(child)?.abortRequested === false)
    );
  }

  /** The marking commit's body. */
  body(id: TaskId): (tx: Transaction) => Promise<number> {
    const max = this.singly.has(id) ? 1 : Infinity;
    return (tx) => markChildrenIn(tx, id, max);
  }

  /** After a marking commit: whether the owner must be looked at again (one per commit, more to go). */
  again(id: TaskId, marked: number): boolean {
    return this.singly.has(id) && marked > 0;
  }

  /** A marking commit failed: true when it is retried one per commit (look at the owner again); else it is not retried. */
  retried(id: TaskId, error: unknown): boolean {
    if (error instanceof CommitTooLarge && !this.singly.has(id)) {
      this.singly.add(id);
      return true;
    }
    this.unmarkable.add(id);
    return false;
  }
}
