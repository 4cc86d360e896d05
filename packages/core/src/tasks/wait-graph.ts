import { TaskFaulted } from "../domain/errors.js";
import type { TaskId } from "../domain/ids.js";
import type { TaskRecord } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import type { AnyTaskDefinition } from "./define-task.js";
import { errorInfo } from "./error-info.js";
import type { TaskIndex } from "./task-index.js";
import { liveChildren, ownerAbortsIn, writeFinish, type Stamp } from "./transitions.js";

/**
 * One edge of the wait-for graph: `from` cannot end before `to` does. A
 * task waits on the tasks of its `waiting` state (unless it is abort-marked:
 * then it ends once its owned work does, whatever it waited on), an owner
 * on its live owned tasks (it holds `completing`, or its abort handler
 * waits, until they end), and a running phase on the task it awaits with
 * `rt.waitForTask`.
 */
export type WaitEdge = { from: number; to: number; how: "waits on" | "owns" | "awaits" };

/** The tasks a running phase of `id` awaits in memory (`rt.waitForTask`). */
export type AwaitsOf = (id: number) => readonly number[];

/** The edges out of live task `task`, given its live owned tasks and in-memory awaits. */
export function edgesOut(
  task: TaskRecord,
  children: readonly number[],
  awaits: readonly number[],
): WaitEdge[] {
  const edges: WaitEdge[] = [];
  if (task.state.status === "waiting" && !task.abortRequested)
    for (const to of task.state.on) edges.push({ from: task.id, to, how: "waits on" });
  for (const to of children) edges.push({ from: task.id, to, how: "owns" });
  for (const to of awaits) edges.push({ from: task.id, to, how: "awaits" });
  return edges;
}

/**
 * The new edges a wait of `waiter` adds: one per awaited task it does not
 * own (its owned tasks already hold it through ownership, so waiting on them
 * adds nothing the graph does not have).
 */
export function newWaitEdges(
  waiter: number,
  targets: readonly number[],
  how: WaitEdge["how"],
  ownerOf: (id: number) => number | undefined,
): WaitEdge[] {
  return targets
    .filter((to) => ownerOf(to) !== waiter)
    .map((to): WaitEdge => ({ from: waiter, to, how }));
}

/**
 * Breadth-first search from the targets of `first` (edges out of `waiter`)
 * for a path back to `waiter`; the cycle it returns starts with one of
 * `first`. A generator, so one search runs over the scheduler's index
 * (synchronously) and inside a commit (table reads): it yields a task id
 * and is sent that task's edges (none for a task that is terminal).
 */
function* searchBack(
  waiter: number,
  first: readonly WaitEdge[],
): Generator<number, WaitEdge[] | undefined, readonly WaitEdge[]> {
  const via = new Map<number, WaitEdge>();
  const queue: number[] = [];
  const cycleThrough = (): WaitEdge[] => {
    const path: WaitEdge[] = [];
    let at = waiter;
    do {
      const edge = via.get(at) as WaitEdge;
      path.unshift(edge);
      at = edge.from;
    } while (at !== waiter);
    return path;
  };
  const reach = (edges: readonly WaitEdge[]): boolean => {
    for (const edge of edges) {
      if (via.has(edge.to)) continue;
      via.set(edge.to, edge);
      if (edge.to === waiter) return true;
      queue.push(edge.to);
    }
    return false;
  };
  if (reach(first)) return cycleThrough();
  for (let next = 0; next < queue.length; next += 1)
    if (reach(yield queue[next] as number)) return cycleThrough();
  return undefined;
}

/** The cycle `first` would close, read from the scheduler's index of live tasks. */
export function cycleInIndex(
  index: TaskIndex,
  awaitsOf: AwaitsOf,
  waiter: number,
  first: readonly WaitEdge[],
): WaitEdge[] | undefined {
  const search = searchBack(waiter, first);
  let step = search.next([]);
  while (!step.done) {
    const task = index.get(step.value);
    const edges = task ? edgesOut(task, index.liveChildIds(task.id), awaitsOf(task.id)) : [];
    step = search.next(edges);
  }
  return step.value;
}

/**
 * The cycle `first` closes, read inside a commit (stored state plus
 * prepared commits). Table reads: call it before the commit's first write.
 */
export async function cycleInCommit(
  tx: Transaction,
  awaitsOf: AwaitsOf,
  waiter: number,
  first: readonly WaitEdge[],
): Promise<WaitEdge[] | undefined> {
  const search = searchBack(waiter, first);
  let step = search.next([]);
  while (!step.done) {
    const task = await tx.task(step.value as TaskId);
    let edges: WaitEdge[] = [];
    if (task && task.state.status !== "terminal") {
      const children = (await liveChildren(tx, task.id)).map((child) => child.id);
      edges = edgesOut(task, children, awaitsOf(task.id));
    }
    step = search.next(edges);
  }
  return step.value;
}

/**
 * Which waiter on `cycle` to fault: the one whose wait was stored last
 * (`storedAt`: the commit seq of each task's wait), which is the wait that
 * closed it; `found` (the waiter whose check found it) on a tie.
 */
export function closerOf(
  cycle: readonly WaitEdge[],
  found: number,
  storedAt: (id: number) => number,
): number {
  let closer = found;
  for (const edge of cycle)
    if (edge.how === "waits on" && storedAt(edge.from) > storedAt(closer)) closer = edge.from;
  return closer;
}

/** "task 7 waits on task 6, task 6 owns task 9, task 9 waits on task 7". */
export function describeCycle(cycle: readonly WaitEdge[]): string {
  return cycle.map((edge) => `task ${edge.from} ${edge.how} task ${edge.to}`).join(", ");
}

/** The error a task gets whose wait (or `rt.waitForTask`) would close `cycle`. */
export function cycleError(
  task: { id: number; kind: string },
  cycle: readonly WaitEdge[],
): TaskFaulted {
  const first = cycle[0] as WaitEdge;
  const what = first.how === "awaits" ? "rt.waitForTask" : "wait";
  return new TaskFaulted(
    `task ${task.id} ("${task.kind}"): its ${what} on task ${first.to} closes a wait cycle (${describeCycle(cycle)}); no task in it could ever end`,
  );
}

/**
 * Why `caller`'s phase may not await `id` (`rt.waitForTask`): `id` is the
 * caller itself, or waits on it (directly, or through tasks it waits on,
 * owns or awaits); `undefined` when the await may go ahead.
 */
export function refusedAwait(
  index: TaskIndex,
  awaitsOf: AwaitsOf,
  caller: TaskId,
  id: TaskId,
): TaskFaulted | undefined {
  const kind = index.get(caller)?.kind ?? "unknown";
  if (id === caller)
    return new TaskFaulted(
      `task ${caller} ("${kind}"): rt.waitForTask on itself would never end (a task ends after its phase returns)`,
    );
  const first = newWaitEdges(caller, [id], "awaits", (to) => index.get(to)?.owner);
  const cycle = cycleInIndex(index, awaitsOf, caller, first);
  return cycle ? cycleError({ id: caller, kind }, cycle) : undefined;
}

/**
 * Faults a waiting task whose wait closes a cycle, re-checked inside the
 * commit (the index that suspected it may be stale): nothing happens unless
 * the task still waits, is not abort-marked, and a path from what it waits
 * on leads back to it. Like any fault it ends the task (`completing` while
 * it owns live tasks, which are then aborted), which breaks the cycle.
 */
export async function faultWaitCycleIn(
  tx: Transaction,
  id: TaskId,
  definition: AnyTaskDefinition,
  awaitsOf: AwaitsOf,
  stamp: Stamp,
): Promise<TaskRecord | null> {
  const task = await tx.task(id);
  // A waiter being aborted (itself, or an owner up its chain before the marks reach it) is not faulted: it aborts.
  if (!task || task.state.status !== "waiting" || task.abortRequested) return null;
  if (await ownerAbortsIn(tx, task)) return null;
  const owners = new Map<number, number | undefined>();
  for (const on of task.state.on) owners.set(on, (await tx.task(on))?.owner);
  const first = newWaitEdges(id, task.state.on, "waits on", (to) => owners.get(to));
  const cycle = await cycleInCommit(tx, awaitsOf, id, first);
  if (!cycle) return null;
  const live = (await liveChildren(tx, id, 1)).length > 0;
  const outcome = { kind: "faulted" as const, error: errorInfo(cycleError(task, cycle)) };
  return writeFinish(tx, definition, task, outcome, live, stamp);
}
