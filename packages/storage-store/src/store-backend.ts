import { StoragePoisoned } from "@durably/core";
import type {
  BatchPlan,
  CommitCall,
  CommitOutcome,
  StorageBackend,
  StorageCapabilities,
} from "@durably/core/storage";
import { ValueCache } from "./cache.js";
import { CheckedStore } from "./checked-store.js";
import { countersPayload, marker, type Counters } from "./commit-chain.js";
import { writePlan } from "./commit-plan.js";
import type { KeyValueOp, KeyValueStore } from "./key-value-store.js";
import { K } from "./keys.js";
import { STORE_FORMAT } from "./open-state.js";
import { StoreReader } from "./store-reader.js";
import { KnownValues, StoreView } from "./store-view.js";
import { View, type Pending } from "./view.js";

export interface StoreBackendOptions {
  /** Conversation and document-state values kept in memory to spare a read per commit. Default 10 000; 0 disables. */
  cacheSize?: number;
}

/**
 * The store backend behind the checked front. A `commit` call reads what
 * planning will ask (`call.needs()`), plans, lays the plans out as keys
 * (each batch in its own layer over the earlier ones) and stores them in one
 * atomic `write` together with the call's commit-chain marker and the
 * counters. Counters live in memory and are written inside each write.
 */
export class StoreBackend extends StoreReader implements StorageBackend {
  readonly name = "store storage";
  readonly capabilities: StorageCapabilities;
  readonly freshReads = true;
  private seq: number;
  private minted: number;
  private formatWritten: boolean;
  /** Seq the chain was verified up to at open: written into every commit's counters for the next open. */
  private readonly verified: number;
  /** Checksum field of the newest commit marker. */
  private link: string;
  private poisonCause: unknown;
  private poisoned = false;

  constructor(
    readonly store: KeyValueStore,
    counters: Counters,
    formatWritten: boolean,
    options: StoreBackendOptions,
  ) {
    const size = options.cacheSize ?? 10_000;
    const kv = new CheckedStore(store, (error) => {
      // The store said the outcome of its I/O is uncertain (levelStore: a failed write): trust nothing
      // until a reopen. A failed read (StorageIOError) changed nothing, so the storage stays usable.
      if (error instanceof StoragePoisoned && !this.poisoned) this.poison(error);
    });
    super(kv, new ValueCache(size), new KnownValues(Math.min(size, 1024)), counters.ids);
    this.capabilities = Object.freeze({ persistent: store.persistent === true });
    this.seq = counters.seq;
    this.minted = Math.max(1, counters.ids);
    this.formatWritten = formatWritten;
    this.verified = counters.seq;
    this.link = counters.link;
  }

  failure(): StoragePoisoned | undefined {
    if (!this.poisoned) return undefined;
    return new StoragePoisoned(
      "an earlier write to the store failed with an uncertain outcome; reopen the storage",
      { cause: this.poisonCause },
    );
  }

  private poison(cause: unknown): void {
    this.poisoned = true;
    this.poisonCause = cause;
  }

  mintId(): number {
    const next = Math.max(this.minted, this.idBound) + 1;
    if (!Number.isSafeInteger(next)) throw new RangeError("id space exhausted");
    this.minted = next;
    return next;
  }

  async commit(call: CommitCall): Promise<CommitOutcome> {
    if (call.batches.length === 0) return { stored: 0 };
    const view = await StoreView.fetch(this, call.needs(), this.seq, this.values);
    const plans = call.plan(view, this.seq + 1);
    if (plans.length === 0) return { stored: 0 };
    const pending: Pending = new Map();
    let idBound = this.idBound;
    for (const plan of plans) {
      // Each batch writes its own layer over the earlier ones, so it reads what they wrote.
      const own: Pending = new Map();
      const reading = writePlan(plan, new View(this, [own, pending]));
      if (reading !== undefined) await reading;
      for (const [key, value] of own) pending.set(key, value);
      idBound = Math.max(idBound, plan.highestId);
    }
    const seq = this.seq + plans.length;
    const ops: KeyValueOp[] = [];
    for (const [key, value] of pending)
      ops.push(value === null ? { type: "del", key } : { type: "put", key, value });
    const chained = marker(this.seq + 1, seq, this.link);
    ops.push({ type: "put", key: chained.key, value: chained.payload });
    const ids = Math.max(this.minted, idBound);
    const counters: Counters = { seq, ids, verified: this.verified, link: chained.link };
    ops.push({ type: "put", key: K.counters, value: countersPayload(counters) });
    if (!this.formatWritten) ops.push({ type: "put", key: K.format, value: String(STORE_FORMAT) });
    this.generation++;
    try {
      await this.kv.write(ops);
    } catch (error) {
      // The write may or may not have landed: nothing in memory can be trusted until a reopen.
      this.poison(error);
      throw error;
    }
    this.generation++;
    this.link = chained.link;
    this.seq = seq;
    this.idBound = idBound;
    this.formatWritten = true;
    for (const [key, value] of pending) {
      if (!key.startsWith("c/") && !key.startsWith("d/")) continue;
      if (value === null) this.cache.delete(key);
      else this.cache.set(key, { raw: value });
    }
    this.#adopt(plans);
    return { stored: plans.length };
  }

  /** Remembers the current values the stored plans left. */
  #adopt(plans: readonly BatchPlan[]): void {
    for (const plan of plans)
      for (const w of plan.writes)
        if (w.type === "document.create")
          this.values.set(w.record.id, {
            version: w.content.version,
            value: w.content.value,
            deltasSinceBase: 0,
          });
        else if (w.type === "document.change") this.values.set(w.id, w.after);
        else if (w.type === "document.retire") this.values.delete(w.id);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
