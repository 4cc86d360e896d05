import type { Json } from "@durably/core";
import type { MaterializedValue } from "./documents.js";

/** What a write needs to know about a document that exists. */
export interface DocumentState {
  version: number;
  rewindable: boolean;
  /** Seq it was retired at, or null while live. */
  retiredAt: number | null;
  /** The current value, when known (always for live documents written or read by this storage). */
  current?: MaterializedValue;
}

export function liveState(
  version: number,
  value: Json,
  deltasSinceBase: number,
  rewindable: boolean,
): DocumentState {
  return { version, rewindable, retiredAt: null, current: { version, value, deltasSinceBase } };
}

/**
 * Committed state this storage knows without asking the database: which
 * conversations exist and the current state of recently written documents.
 * It is exact because the lease makes this storage the session's only
 * writer; it is bounded, and a miss costs one lookup before the commit.
 */
export class KnownState {
  readonly #conversations = new Set<number>();
  readonly #documents = new Map<number, DocumentState>();
  readonly #limit: number;

  constructor(limit = 1024) {
    this.#limit = limit;
  }

  hasConversation(id: number): boolean {
    return this.#conversations.has(id);
  }

  addConversation(id: number): void {
    // Forgetting costs a lookup later, never a wrong answer: conversations are never deleted.
    if (this.#conversations.size >= 65_536) this.#conversations.clear();
    this.#conversations.add(id);
  }

  document(id: number): DocumentState | undefined {
    const state = this.#documents.get(id);
    if (state !== undefined) {
      // Refresh recency: Map iteration order is insertion order.
      this.#documents.delete(id);
      this.#documents.set(id, state);
    }
    return state;
  }

  setDocument(id: number, state: DocumentState): void {
    this.#documents.delete(id);
    if (state.retiredAt !== null) return;
    this.#documents.set(id, state);
    if (this.#documents.size > this.#limit) {
      const oldest = this.#documents.keys().next();
      if (!oldest.done) this.#documents.delete(oldest.value);
    }
  }
}
