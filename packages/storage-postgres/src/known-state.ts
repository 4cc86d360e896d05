import { KnownDocuments, type CurrentValue, type PlanDocument } from "@durably/core/storage";
import type { DocumentRow } from "./rows.js";

/** What a commit needs to know about a document that exists: its lifetime, newest base and (live) value. */
export interface DocumentState extends PlanDocument {
  /** The current value, when known (always for live documents written or loaded by this storage). */
  current?: CurrentValue;
}

/** A loaded row's state, with its current value when it was materialised. */
export function rowState(row: DocumentRow, current?: CurrentValue): DocumentState {
  return {
    createdAt: row.created_at,
    retiredAt: row.retired_at ?? undefined,
    currentOnly: !row.rewindable,
    newestBaseSeq: row.base_seq,
    ...(current === undefined ? {} : { current }),
  };
}

/**
 * Committed state this storage knows without asking the database: which
 * conversations exist and the current state of recently written documents.
 * It is exact because the lease makes this storage the session's only
 * writer; it is bounded, and a miss costs one lookup before the commit.
 */
export class KnownState {
  readonly #conversations = new Set<number>();
  readonly documents = new KnownDocuments();

  hasConversation(id: number): boolean {
    return this.#conversations.has(id);
  }

  addConversation(id: number): void {
    // Forgetting costs a lookup later, never a wrong answer: conversations are never deleted.
    if (this.#conversations.size >= 65_536) this.#conversations.clear();
    this.#conversations.add(id);
  }
}
