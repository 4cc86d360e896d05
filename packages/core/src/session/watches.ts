import type { Seq } from "../domain/ids.js";
import type { Op } from "../domain/ops.js";
import type { StorageWrite } from "../storage/port.js";
import type { DocState } from "./prepared.js";
import type { DocValue } from "./tokens.js";

/** Called with the document's new value (`undefined` once retired) and the ops from the previous value. */
export type DocListener<T> = (value: T | undefined, ops: readonly Op[]) => void;

/** What a commit subscriber receives, once storage has stored the batch, in seq order. */
export interface CommitEvent {
  readonly seq: Seq;
  /** The batch as stored (read only). */
  readonly writes: readonly StorageWrite[];
  /** True for a batch of coalesced deferred progress commits. */
  readonly deferred: boolean;
}

export type CommitListener = (event: CommitEvent) => void;

/** Where a listener error is reported instead of breaking the commit that triggered it. */
export type ListenerErrorHandler = (error: unknown, where: string) => void;

export const reportToConsole: ListenerErrorHandler = (error, where) => {
  console.error(`durably: a ${where} threw`, error);
};

interface DocWatcher {
  /** Turns the stored state into what this watcher's token reads (migration), with matching ops. */
  readonly view: (
    state: DocState,
    ops: readonly Op[],
  ) => { value: DocValue | undefined; ops: readonly Op[] };
  readonly listener: DocListener<DocValue>;
}

/** Document watchers by address key. */
export class DocWatches {
  private readonly byKey = new Map<string, Set<DocWatcher>>();

  constructor(private readonly onError: ListenerErrorHandler) {}

  add(key: string, watcher: DocWatcher): () => void {
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(watcher);
    return () => {
      set.delete(watcher);
      if (set.size === 0 && this.byKey.get(key) === set) this.byKey.delete(key);
    };
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  get empty(): boolean {
    return this.byKey.size === 0;
  }

  notify(key: string, state: DocState, ops: readonly Op[]): void {
    const set = this.byKey.get(key);
    if (!set) return;
    // A copy, so one added meanwhile waits for the next change; one disposed meanwhile is skipped.
    for (const watcher of [...set]) {
      if (!set.has(watcher)) continue;
      try {
        const seen = watcher.view(state, ops);
        watcher.listener(seen.value, seen.ops);
      } catch (error) {
        this.onError(error, "document watcher");
      }
    }
  }

  clear(): void {
    this.byKey.clear();
  }
}

/** Commit subscribers, called in seq order after each stored batch. */
export class CommitSubscribers {
  private readonly listeners = new Set<CommitListener>();

  constructor(private readonly onError: ListenerErrorHandler) {}

  add(listener: CommitListener): () => void {
    const entry = (event: CommitEvent): void => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  get empty(): boolean {
    return this.listeners.size === 0;
  }

  notify(event: CommitEvent): void {
    for (const listener of [...this.listeners]) {
      if (!this.listeners.has(listener)) continue; // disposed by an earlier one
      try {
        listener(event);
      } catch (error) {
        this.onError(error, "commit subscriber");
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
