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
