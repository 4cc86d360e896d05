import type { DocumentRecord } from "../domain/records.js";
import type { DocumentAddress } from "./port.js";
import { scopeKey } from "./scope.js";

/**
 * Whether only the current value of an incarnation is kept: session and
 * task scope, and conversation scope unless `history: "rewindable"`.
 */
export function isCurrentOnly(record: Pick<DocumentRecord, "scope" | "history">): boolean {
  return record.scope.kind !== "conversation" || record.history !== "rewindable";
}

/** Live at seq `s` iff created at or before `s` and not retired at or before it; live at "current" iff not retired. */
export function isLiveAt(
  lifetime: { createdAt: number; retiredAt?: number | undefined },
  at: number | "current",
): boolean {
  if (at === "current") return lifetime.retiredAt === undefined;
  return lifetime.createdAt <= at && (lifetime.retiredAt === undefined || at < lifetime.retiredAt);
}

/** A string naming `(kind, scope, key)`, for maps; an absent key differs from every string key. */
export function addressKey(address: Pick<DocumentAddress, "kind" | "scope" | "key">): string {
  return JSON.stringify([address.kind, scopeKey(address.scope), address.key ?? null]);
}

/**
 * Whether a document keeps its value at seq `at`: it is live there, and, if
 * it keeps only its current value, it is not retired and `at` is not before
 * its newest base. Reads and copies of history that is not kept are refused;
 * backends use this to skip reading it.
 */
export function isHistoryKept(
  doc: {
    createdAt: number;
    retiredAt?: number | undefined;
    currentOnly: boolean;
    newestBaseSeq: number;
  },
  at: number,
): boolean {
  if (!isLiveAt(doc, at)) return false;
  return !doc.currentOnly || (doc.retiredAt === undefined && at >= doc.newestBaseSeq);
}
