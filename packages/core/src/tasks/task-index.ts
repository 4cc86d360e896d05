import type { TaskRecord, TaskStatus } from "../domain/records.js";
import type { SessionReader } from "../session/reader.js";
import type { CallOptions, Cursor } from "../storage/port.js";
import { propagatesAbort } from "./transitions.js";

const PAGE = 256;
const LIVE: readonly TaskStatus[] = ["pending", "running", "waiting", "completing"];

/**
 * The scheduler's in-memory view of every task that is not terminal, kept
 * from stored commits (loaded at start, then from commit notifications). It
 * only decides what to look at; every transition re-reads the task inside
 * its commit, so a stale index costs at most an empty commit.
 */
export class TaskIndex {
  private readonly live = new Map<number, TaskRecord>();
  private readonly children = new Map<number, Set<number>>();
  /** Awaited task id -> ids of the waiting tasks that wait on it. */
  private readonly waiters = new Map<number, Set<number>>();

  get(id: number): TaskRecord | undefined {
    return this.live.get(id);
  }

  get size(): number {
    return this.live.size;
  }

  values(): IterableIterator<TaskRecord> {
    return this.live.values();
  }

  /**
   * Whether a live task must abort, as far as stored commits tell: it is
   * abort-marked, or a task up its owner chain propagates abort (aborting,
   * or ended other than completed) before the scheduler's marks reach it.
   * An owner with live tasks is never terminal, so the chain is all here.
   */
  aborting(id: number): boolean {
    const task = this.live.get(id);
    if (task?.abortRequested) return true;
    for (let owner = task?.owner; owner !== undefined;) {
      const record = this.live.get(owner);
      if (!record) return false;
      if (propagatesAbort(record)) return true;
      owner = record.owner;
    }
    return false;
  }

  /** Every live task below `owner` through owner links, at all depths. */
  liveOwnedTree(owner: number): number[] {
    const tree = this.liveChildIds(owner).slice();
    // Breadth first over the ids it appends; owner links cannot cycle.
    for (let i = 0; i < tree.length; i++) tree.push(...this.liveChildIds(tree[i] as number));
    return tree;
  }

  liveChildIds(owner: number): readonly number[] {
    const set = this.children.get(owner);
    return set ? [...set] : [];
  }

  hasLiveChildren(owner: number): boolean {
    return (this.children.get(owner)?.size ?? 0) > 0;
  }

  /** Records a stored task; returns the ids whose situation may have changed (the task, its owner, its waiters). */
  observe(task: TaskRecord): number[] {
    const previous = this.live.get(task.id);
    if (previous) this.unlink(previous);
    const affected: number[] = [task.id];
    if (task.state.status === "terminal") {
      this.live.delete(task.id);
      if (task.owner !== undefined) affected.push(task.owner);
      const waiting = this.waiters.get(task.id);
      if (waiting) affected.push(...waiting);
      return affected;
    }
    this.live.set(task.id, task);
    if (task.owner !== undefined) {
      let set = this.children.get(task.owner);
      if (!set) this.children.set(task.owner, (set = new Set()));
      set.add(task.id);
      // A new or re-marked child matters to an owner that propagates abort marks.
      affected.push(task.owner);
    }
    if (task.state.status === "waiting")
      for (const on of task.state.on) {
        let set = this.waiters.get(on);
        if (!set) this.waiters.set(on, (set = new Set()));
        set.add(task.id);
      }
    return affected;
  }

  private unlink(task: TaskRecord): void {
    if (task.owner !== undefined) {
      const set = this.children.get(task.owner);
      set?.delete(task.id);
      if (set?.size === 0) this.children.delete(task.owner);
    }
    if (task.state.status === "waiting")
      for (const on of task.state.on) {
        const set = this.waiters.get(on);
        set?.delete(task.id);
        if (set?.size === 0) this.waiters.delete(on);
      }
  }

  /** Whether a waiting task's awaited tasks may have settled per its policy (the commit decides exactly). */
  maybeSettled(task: TaskRecord): boolean {
    if (task.state.status !== "waiting") return false;
    const live = task.state.on.filter((id) => this.live.has(id));
    if (live.length === 0) return true;
    return task.state.policy === "failFast" && live.length < task.state.on.length;
  }
}

/** An index of every task the store holds that is not terminal (the scheduler's start). */
export async function loadLiveTasks(
  read: SessionReader,
  options?: CallOptions,
): Promise<TaskIndex> {
  const index = new TaskIndex();
  for (const status of LIVE) {
    let cursor: Cursor | undefined;
    do {
      const page = await read.scanTasks({ status }, PAGE, cursor, options);
      for (const task of page.items) index.observe(task);
      cursor = page.next;
    } while (cursor !== undefined);
  }
  return index;
}
