import type { BatchPlan, CurrentValue, PlanDocument } from "./plan-types.js";

/** A live stored document as a backend remembers it between commits: its state and current value. */
export interface KnownDocument extends PlanDocument {
  retiredAt: undefined;
  current: CurrentValue;
  /** Seq of the newest revision (base or delta) stored: what a backend that links revisions needs. */
  lastSeq: number;
}

/**
 * The committed state of recently written documents, for backends that
 * answer the planner from disk: a delta is then checked against (and
 * applied to) the current value without reading the revision tail back.
 * Bounded (least recently used first out): a miss costs the backend one
 * read, never a wrong answer, as long as only the backend writes.
 */
export class KnownDocuments {
  readonly #documents = new Map<number, KnownDocument>();
  readonly #limit: number;

  constructor(limit = 1024) {
    this.#limit = limit;
  }

  get(id: number): KnownDocument | undefined {
    const known = this.#documents.get(id);
    if (known !== undefined) {
      // Refresh recency: Map iteration order is insertion order.
      this.#documents.delete(id);
      this.#documents.set(id, known);
    }
    return known;
  }

  set(id: number, known: KnownDocument): void {
    this.#documents.delete(id);
    if (this.#limit <= 0) return;
    this.#documents.set(id, known);
    if (this.#documents.size > this.#limit) {
      const oldest = this.#documents.keys().next();
      if (!oldest.done) this.#documents.delete(oldest.value);
    }
  }

  delete(id: number): void {
    this.#documents.delete(id);
  }

  /**
   * Remembers what a stored plan made true of its documents: created ones
   * with their base, changed ones with their new value, retired ones
   * forgotten. `before` answers for a changed document not remembered here
   * (what the planner was told); one it cannot answer is left out.
   */
  adopt(plan: BatchPlan, before: (id: number) => PlanDocument | undefined): void {
    for (const w of plan.writes)
      if (w.type === "document.create")
        this.set(w.record.id, {
          createdAt: plan.seq,
          retiredAt: undefined,
          currentOnly: w.currentOnly,
          newestBaseSeq: plan.seq,
          current: { version: w.content.version, value: w.content.value, deltasSinceBase: 0 },
          lastSeq: plan.seq,
        });
      else if (w.type === "document.change") {
        const known = this.get(w.id) ?? before(w.id);
        if (known === undefined) continue;
        this.set(w.id, {
          createdAt: known.createdAt,
          retiredAt: undefined,
          currentOnly: w.currentOnly,
          newestBaseSeq: w.content.kind === "base" ? plan.seq : known.newestBaseSeq,
          current: w.after,
          lastSeq: plan.seq,
        });
      } else if (w.type === "document.retire") this.delete(w.id);
  }
}
