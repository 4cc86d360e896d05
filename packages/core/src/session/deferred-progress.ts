import type { Seq } from "../domain/ids.js";
import type { Batch } from "../storage/port.js";
import { coalesce } from "./deferred.js";
import type { PreparedCommit } from "./prepared.js";

/** What the buffer needs of a deferred commit. */
interface DeferredItem {
  readonly prepared: PreparedCommit | null;
}

/**
 * Deferred progress commits: applied and published at once, stored later,
 * coalesced, at the earliest of the next ordinary commit, the next read of
 * what they touched, close, or `persistWithinMs` after the first of them.
 */
export class DeferredProgress<I extends DeferredItem = DeferredItem> {
  private items: I[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly persistWithinMs: number,
    /** Hands one coalesced batch (its counted size `bytes`) to the flusher; resolves once stored. */
    private readonly store: (writes: Batch, items: readonly I[], bytes: number) => Promise<Seq>,
    /** The most one coalesced batch may count (the per-commit limit): more goes into further batches. */
    private readonly budget = Number.POSITIVE_INFINITY,
  ) {}

  /** True when deferred commits wait to be stored. */
  get pending(): boolean {
    return this.items.length > 0;
  }

  add(item: I): void {
    this.items.push(item);
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.persistWithinMs);
    this.timer.unref?.();
  }

  /** Forgets every waiting commit (the session failed); returns them so they can be rejected. */
  drop(): I[] {
    this.clearTimer();
    const items = this.items;
    this.items = [];
    return items;
  }

  clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Hands pending deferred commits to the flusher, coalesced; resolves once
   * they are stored. Several callers start a flush without awaiting it (the
   * timer, an ordinary commit, a seq lookup): the returned promise is marked
   * handled, so a failed storage call surfaces through the commits and the
   * failed state, never as an unhandled rejection; awaiting callers still
   * see the rejection.
   */
  flush(): Promise<void> {
    this.clearTimer();
    if (this.items.length === 0) return Promise.resolve();
    const items = this.items;
    this.items = [];
    const waits: Promise<Seq>[] = [];
    const prepared = (item: I): PreparedCommit => item.prepared as PreparedCommit;
    for (const group of coalesce(items, prepared, this.budget)) {
      const done = this.store(group.writes, group.layers, group.bytes);
      done.catch(() => undefined); // observed through the commit promises / the failed state
      waits.push(done);
    }
    const stored = Promise.all(waits).then(() => undefined);
    stored.catch(() => undefined);
    return stored;
  }

  /** True when a waiting commit changed the document at `key`. */
  touches(key: string): boolean {
    return this.items.some((item) =>
      (item.prepared as PreparedCommit).docs.some((change) => change.addressKey === key),
    );
  }

  /** True when a waiting commit wrote table records (reads outside the line store them first). */
  hasTables(): boolean {
    return this.items.some((item) => {
      const layer = item.prepared as PreparedCommit;
      return (
        layer.conversations.length +
          layer.entries.length +
          layer.tasks.length +
          layer.submissions.length >
        0
      );
    });
  }
}
