import type { TaskId } from "../domain/ids.js";
import type { TaskOutcome, TaskRecord } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Transaction } from "../session/transaction.js";
import { TaskFaulted } from "../domain/errors.js";
import { checkCheckpoint, type AnyTaskDefinition } from "./define-task.js";
import { errorInfo } from "./error-info.js";

const LIVE = ["pending", "running", "waiting", "completing"] as const;
const PAGE = 256;

export function isLive(task: TaskRecord): boolean {
  return task.state.status !== "terminal";
}

/**
 * The owned tasks of `owner` that are not terminal, as this transaction sees
 * them (stored plus prepared commits). A table read: call it before the
 * transaction's first table write. `limit` stops early (existence checks).
 */
export async function liveChildren(
  tx: Transaction,
  owner: TaskId,
  limit = Number.POSITIVE_INFINITY,
): Promise<TaskRecord[]> {
  const out: TaskRecord[] = [];
  for (const status of LIVE) {
    let cursor: Cursor | undefined;
    do {
      const page = await tx.scanTasks(
        { owner, status },
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
 * Writes the end of a task: `completing` while it still owns live tasks,
 * else `terminal` (stamped `endedAt`, its task documents retire with the
 * commit, and the definition's `onTerminal` writes join the same commit).
 */
export async function writeFinish(
  tx: Transaction,
  definition: AnyTaskDefinition | undefined,
  task: TaskRecord,
  outcome: TaskOutcome,
  ownsLiveTasks: boolean,
  now: number,
): Promise<TaskRecord> {
  const next: TaskRecord = ownsLiveTasks
    ? { ...task, state: { status: "completing", outcome } }
    : { ...task, state: { status: "terminal", outcome }, endedAt: now };
  const stored = await tx.putTask(next);
  if (!ownsLiveTasks && definition?.onTerminal) await definition.onTerminal(tx, stored);
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
 * already terminal ends `orphaned`; a failed migration ends `faulted`.
 * Returns `null` when there is nothing to reserve (yet).
 */
export async function reserveIn(
  tx: Transaction,
  id: TaskId,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
  now: number,
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
        await writeFinish(tx, definition, task, { kind: "orphaned" }, await hasLive(), now);
        return null;
      }
    }
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
            now,
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
      checkpoint = definition.migrate(checkpoint, task.version);
      checkCheckpoint(definition, checkpoint, `migrate(checkpoint, ${task.version})`);
    } catch (error) {
      const live = await hasLive();
      await writeFinish(
        tx,
        definition,
        task,
        { kind: "faulted", error: errorInfo(error) },
        live,
        now,
      );
      return null;
    }
  }
  const record = await tx.putTask({
    ...task,
    version: definition.version,
    state: { status: "running", checkpoint },
    startedAt: task.startedAt ?? now,
  });
  return { record, abort: task.abortRequested };
}

/** Ends a task this scheduler runs (fault, abort outcome); no-op unless it is still `running`. */
export async function finishRunningIn(
  tx: Transaction,
  id: TaskId,
  definition: AnyTaskDefinition,
  outcome: TaskOutcome,
  now: number,
): Promise<TaskRecord | null> {
  const task = await tx.task(id);
  if (!task || task.state.status !== "running") return null;
  const live = (await liveChildren(tx, id, 1)).length > 0;
  return writeFinish(tx, definition, task, outcome, live, now);
}

/** `completing` becomes `terminal` once the task owns no live task. */
export async function finalizeIn(
  tx: Transaction,
  id: TaskId,
  definition: AnyTaskDefinition,
  now: number,
): Promise<TaskRecord | null> {
  const task = await tx.task(id);
  if (!task || task.state.status !== "completing") return null;
  if ((await liveChildren(tx, id, 1)).length > 0) return null;
  return writeFinish(tx, definition, task, task.state.outcome, false, now);
}

/** Whether a task's owned live tasks must be aborted: it is aborting, or it ended other than completed. */
export function propagatesAbort(task: TaskRecord): boolean {
  if (task.abortRequested) return true;
  return (
    (task.state.status === "completing" || task.state.status === "terminal") &&
    task.state.outcome.kind !== "completed"
  );
}

/** Marks `abortRequested` on the live owned tasks of a task that propagates abort. Returns how many. */
export async function markChildrenIn(tx: Transaction, id: TaskId): Promise<number> {
  const task = await tx.task(id);
  if (!task || !propagatesAbort(task)) return 0;
  const unmarked = (await liveChildren(tx, id)).filter((child) => !child.abortRequested);
  for (const child of unmarked) await tx.putTask({ ...child, abortRequested: true });
  return unmarked.length;
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
