import type { TaskId } from "../domain/ids.js";
import type { TaskOutcome, TaskRecord } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Transaction } from "../session/transaction.js";
import { TaskFaulted, UnknownRecord } from "../domain/errors.js";
import { copyJson } from "../domain/json-copy.js";
import { checkCheckpoint, type AnyTaskDefinition } from "./define-task.js";
import { errorInfo } from "./error-info.js";

const LIVE = ["pending", "running", "waiting", "completing"] as const;
/** Running tasks first: an abort's marks reach the tasks doing work soonest. */
const MARK_ORDER = ["running", "waiting", "pending", "completing"] as const;
const PAGE = 256;

export function isLive(task: TaskRecord): boolean {
  return task.state.status !== "terminal";
}

/**
 * The owned tasks of `owner` that are not terminal, as this transaction sees
 * them (stored plus prepared commits). A table read: call it before the
 * transaction's first table write. `limit` stops early (existence checks).
 * `unmarked`: only those not abort-marked yet, running ones first.
 */
export async function liveChildren(
  tx: Transaction,
  owner: TaskId,
  limit = Number.POSITIVE_INFINITY,
  unmarked = false,
): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  for (const status of unmarked ? MARK_ORDER : LIVE) {
    let cursor: Cursor | undefined;
    do {
      const page = await tx.scanTasks(
        unmarked ? { owner, status, abortRequested: false } : { owner, status },
        Math.min(PAGE, Math.max(1, limit - out.length)),
        cursor,
      );
      out.push(...page.items);
      if (out.length >= limit) return out;
      cursor = page.next;
    } while (cursor !== undefined);
  }
  return out;
}

/**
 * Every live task below `owner` through owner links, at all depths (owned
 * tasks of its owned tasks, and so on), owners before their tasks. A table
 * read, like `liveChildren`. Only live tasks are descended into: a terminal
 * task owns a live task only when one was created for it after it ended,
 * and that one ends orphaned without running.
 */
export async function liveOwnedTree(tx: Transaction, owner: TaskId): Promise<TaskRecord[]> {
  const tree = await liveChildren(tx, owner);
  // Breadth first: the loop reads the tasks it appends. Owner links cannot
  // cycle (an owner exists before the tasks it owns), so this ends.
  for (let i = 0; i < tree.length; i++)
    tree.push(...(await liveChildren(tx, (tree[i] as TaskRecord).id)));
  return tree;
}

/** Reads the clock for a stamp: `what` names the field ("startedAt", "endedAt"). */
export type Stamp = (taskId: TaskId, what: string) => number;

/**
 * Writes the end of a task: `completing` while it still owns live tasks,
 * else `terminal` (stamped `endedAt`, its task documents retire with the
 * commit, and the definition's `onTerminal` writes join the same commit).
 * The definition's `beforeTerminal` reads run first, before anything is
 * written, unless the caller ran them already (`read`: a phase's commit
 * runs them before its callback writes).
 */
export async function writeFinish(
  tx: Transaction,
  definition: AnyTaskDefinition | undefined,
  task: TaskRecord,
  outcome: TaskOutcome,
  ownsLiveTasks: boolean,
  stamp: Stamp,
  read?: { value: unknown },
): Promise<TaskRecord> {
  if (ownsLiveTasks) return tx.putTask({ ...task, state: { status: "completing", outcome } });
  const before = read ?? { value: await definition?.beforeTerminal?.(tx, task) };
  const endedAt = stamp(task.id, "endedAt");
  const stored = await tx.putTask({ ...task, state: { status: "terminal", outcome }, endedAt });
  if (definition?.onTerminal) await definition.onTerminal(tx, stored, before.value);
  return stored;
}

// ---- the scheduler's own commits (each re-reads the task: the index may be stale) ----

export type Reservation = { record: TaskRecord; abort: boolean } | null;

function versionFault(task: TaskRecord, definition: AnyTaskDefinition): TaskFaulted {
  return new TaskFaulted(
    `task ${task.id} ("${task.kind}") is stored at version ${task.version}, but the registered definition is version ${definition.version} and has no migrate`,
  );
}

/**
 * Reserves a task for a run, durably: `pending` (or a `waiting` task whose
 * awaited tasks settled per its policy, or an abort-requested one whose owned
 * tasks are all terminal) becomes `running`, migrated to the definition's
 * version, `startedAt` stamped on first reservation. A task whose owner is
 * already terminal ends `orphaned`; a failed migration ends `faulted`; a
 * pending task its definition's `ready` holds back stays as it is.
 * Returns `null` when there is nothing to reserve (yet).
 */
export async function reserveIn(
  tx: Transaction,
  id: TaskId,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
  stamp: Stamp,
): Promise<Reservation> {
  const task = await tx.task(id);
  if (!task) return null;
  const state = task.state;
  if (state.status !== "pending" && state.status !== "waiting") return null;
  const definition = definitions.get(task.kind);
  if (!definition || task.version > definition.version) return null; // blocked
  const hasLive = async (): Promise<boolean> => (await liveChildren(tx, id, 1)).length > 0;
  if (task.abortRequested) {
    if (await hasLive()) return null; // owned work first
  } else {
    if (task.owner !== undefined) {
      const owner = await tx.task(task.owner);
      if (!owner || owner.state.status === "terminal") {
        await writeFinish(tx, definition, task, { kind: "orphaned" }, await hasLive(), stamp);
        return null;
      }
    }
    if (state.status === "pending" && definition.ready?.(task) === false) return null; // waits for a decision
    if (state.status === "waiting") {
      const awaited: TaskRecord[] = [];
      for (const on of state.on) {
        const other = await tx.task(on);
        if (!other) {
          const error = new TaskFaulted(`task ${id} waits on task ${on}, which does not exist`);
          await writeFinish(
            tx,
            definition,
            task,
            { kind: "faulted", error: errorInfo(error) },
            await hasLive(),
            stamp,
          );
          return null;
        }
        awaited.push(other);
      }
      const terminal = awaited.filter((t) => t.state.status === "terminal");
      const settled =
        terminal.length === awaited.length ||
        (state.policy === "failFast" &&
          terminal.some((t) => (t.state as { outcome: TaskOutcome }).outcome.kind !== "completed"));
      if (!settled) return null;
    }
  }
  let checkpoint = state.checkpoint;
  if (task.version < definition.version) {
    try {
      if (!definition.migrate) throw versionFault(task, definition);
      const where = `migrate(checkpoint, ${task.version})`;
      const migrated: unknown = definition.migrate(checkpoint, task.version);
      checkCheckpoint(definition, migrated, where);
      // Not JSON (a Date, a function) faults the task here, not the commit that would store it.
      checkpoint = copyJson(migrated, `task "${definition.name}": ${where}`);
    } catch (error) {
      const live = await hasLive();
      await writeFinish(
        tx,
        definition,
        task,
        { kind: "faulted", error: errorInfo(error) },
        live,
        stamp,
      );
      return null;
    }
  }
  const startedAt = task.startedAt ?? stamp(id, "startedAt");
  const record = await tx.putTask({
    ...task,
    version: definition.version,
    state: { status: "running", checkpoint },
    startedAt,
  });
  return { record, abort: task.abortRequested };
}

/** Ends a task this scheduler runs (fault, abort outcome); no-op unless it is still `running`. */
export async function finishRunningIn(
  tx: Transaction,
  id: TaskId,
  definition: AnyTaskDefinition,
  outcome: TaskOutcome,
  stamp: Stamp,
): Promise<TaskRecord | null> {
  const task = await tx.task(id);
  if (!task || task.state.status !== "running") return null;
  const live = (await liveChildren(tx, id, 1)).length > 0;
  return writeFinish(tx, definition, task, outcome, live, stamp);
}

/** `completing` becomes `terminal` once the task owns no live task. */
export async function finalizeIn(
  tx: Transaction,
  id: TaskId,
  definition: AnyTaskDefinition,
  stamp: Stamp,
): Promise<TaskRecord | null> {
  const task = await tx.task(id);
  if (!task || task.state.status !== "completing") return null;
  if ((await liveChildren(tx, id, 1)).length > 0) return null;
  return writeFinish(tx, definition, task, task.state.outcome, false, stamp);
}

/**
 * Why this process cannot run a task's code: no definition of its kind is
 * registered, or the task is stored at a newer version than the registered
 * one (a rolling deploy). `undefined` when it can.
 */
export function missingCode(
  task: TaskRecord,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
): string | undefined {
  const definition = definitions.get(task.kind);
  if (!definition) return `no task definition registered for kind "${task.kind}"`;
  if (task.version > definition.version)
    return `stored at version ${task.version}, newer than the registered definition (version ${definition.version})`;
  return undefined;
}

/**
 * `abortTask`'s commit. Resolves false for a terminal task. Otherwise it
 * marks `abortRequested` on the task and on every live task it owns, at all
 * depths (`liveOwnedTree`), in this one commit: once it is stored every one
 * of them is durably aborting and the scheduler aborts their running
 * phases' signals, with no scheduler commit per level in between. With
 * `ownedTree` false only the task is marked (the scheduler marks the rest a
 * level at a time): for a tree whose records do not fit in one commit. The
 * order of the abort handlers is the scheduler's (owned tasks first). A task
 * whose code this process does not have (`missingCode`) and that owns no
 * live task ends at once instead, `orphaned` with the reason, without
 * running any of its code (a registered older definition's `onTerminal`
 * still runs: it is the only cleanup there is). A `completing` task is only
 * marked: it keeps its outcome.
 */
export async function abortIn(
  tx: Transaction,
  id: TaskId,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
  stamp: Stamp,
  ownedTree = true,
): Promise<boolean> {
  const task = await tx.task(id);
  if (!task) throw new UnknownRecord(`abortTask: task ${id} does not exist`);
  if (task.state.status === "terminal") return false;
  // orphanIn writes only when it ends the task; otherwise table reads may go on.
  if ((await orphanIn(tx, task, definitions, stamp)) !== null) return true;
  const owned = ownedTree ? await liveOwnedTree(tx, id) : [];
  for (const record of [task, ...owned])
    if (!record.abortRequested) await tx.putTask({ ...record, abortRequested: true });
  return true;
}

/**
 * Ends a live task whose code this process does not have `orphaned` (with
 * the reason), abort-marked, when it owns no live task; `null` (nothing
 * written) otherwise. Pass an id to re-read the task (the scheduler's
 * commit for an abort-marked one), or the record just read.
 */
export async function orphanIn(
  tx: Transaction,
  task: TaskRecord | TaskId,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
  stamp: Stamp,
): Promise<TaskRecord | null> {
  const record = typeof task === "number" ? await tx.task(task) : task;
  if (!record || record.state.status === "terminal" || record.state.status === "completing")
    return null;
  if (typeof task === "number" && !record.abortRequested) return null;
  const reason = missingCode(record, definitions);
  if (reason === undefined || (await liveChildren(tx, record.id, 1)).length > 0) return null;
  return writeFinish(
    tx,
    definitions.get(record.kind),
    { ...record, abortRequested: true },
    { kind: "orphaned", reason },
    false,
    stamp,
  );
}

/** Whether a task's owned live tasks must be aborted: it is aborting, or it ended other than completed. */
export function propagatesAbort(task: TaskRecord): boolean {
  if (task.abortRequested) return true;
  return (
    (task.state.status === "completing" || task.state.status === "terminal") &&
    task.state.outcome.kind !== "completed"
  );
}

/**
 * Marks `abortRequested` on the live owned tasks of a task that propagates
 * abort. Returns how many. `abortIn` marks a whole subtree itself; this is
 * the scheduler's pass for an owner that ended other than completed, for
 * tasks created after the abort, and for marks an older version left undone.
 * `max` bounds how many it marks (one per commit when together they do not
 * fit in one).
 */
export async function markChildrenIn(tx: Transaction, id: TaskId, max = Infinity): Promise<number> {
  const task = await tx.task(id);
  if (!task || !propagatesAbort(task)) return 0;
  const unmarked = await liveChildren(tx, id, max, true);
  for (const child of unmarked) await tx.putTask({ ...child, abortRequested: true });
  return unmarked.length;
}

/**
 * Stores the abort mark of a live task that is not marked while a task up
 * its owner chain propagates abort: the scheduler's marks have not reached
 * it (they come a commit later), or the commit that would have stored them
 * failed. A running task's run stores it before its abort handler; the
 * scheduler, for a pending or waiting one, which the mark then moves on (a
 * task not ready, or waiting on live tasks, would otherwise never abort).
 * Returns the record as it is after the commit, `null` when it is gone.
 */
export async function markAbortIn(tx: Transaction, id: TaskId): Promise<TaskRecord | null> {
  const task = await tx.task(id);
  if (!task || task.abortRequested || !isLive(task)) return task ?? null;
  if (await ownerAbortsIn(tx, task)) return tx.putTask({ ...task, abortRequested: true });
  return task;
}

/**
 * Whether a task up `task`'s owner chain propagates abort, as `tx` reads
 * them: `task` must abort even when the scheduler's marks have not reached
 * it yet.
 */
export async function ownerAbortsIn(tx: Transaction, task: TaskRecord): Promise<boolean> {
  for (let owner = task.owner; owner !== undefined;) {
    const record = await tx.task(owner);
    if (!record) return false;
    if (propagatesAbort(record)) return true;
    owner = record.owner;
  }
  return false;
}

/** A running, abort-requested task that still owns live tasks goes back to `pending`, freeing its slot. */
export async function parkIn(tx: Transaction, id: TaskId): Promise<boolean> {
  const task = await tx.task(id);
  if (!task || task.state.status !== "running") return false;
  await tx.putTask({ ...task, state: { status: "pending", checkpoint: task.state.checkpoint } });
  return true;
}

/** Recovery: every `running` task returns to `pending`, checkpoint and abort mark kept (its runner died). */
export async function recoverIn(tx: Transaction): Promise<number> {
  const running: TaskRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await tx.scanTasks({ status: "running" }, PAGE, cursor);
    running.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  for (const task of running)
    if (task.state.status === "running")
      await tx.putTask({
        ...task,
        state: { status: "pending", checkpoint: task.state.checkpoint },
      });
  return running.length;
}
