import type { EntryId } from "@durably/core";
import type { ConversationState } from "../readback.js";

/** What the killed-writer child reports to its parent, one JSON line each, in this order. */
export type WriterReport =
  /** Two saves are acknowledged; this is what storage held then. */
  | { type: "ready"; state: ConversationState }
  /** The third save's code is running; it appended this entry. */
  | { type: "saving"; entryId: EntryId }
  /** Inside the SQL transaction, after the statements (which changed `changes` rows), before COMMIT. */
  | { type: "paused"; changes: number }
  /** The third save committed: the pause did not happen (a failure of the fault). */
  | { type: "committed" };

export function parseReport(line: string): WriterReport {
  const value = JSON.parse(line) as { type?: unknown };
  if (
    typeof value !== "object" ||
    value === null ||
    !["ready", "saving", "paused", "committed"].includes(value.type as string)
  ) {
    throw new Error(`sqlite-writer sent an unknown report: ${line}`);
  }
  return value as WriterReport;
}
