import type { NewDocumentRecord } from "../domain/records.js";
import type { BatchProblem } from "./batch-checks.js";
import { scopeKey } from "./scope.js";

/*
 * Every refusal a batch can meet because of stored state, with its reason
 * and message, in one place: the planner (`planBatch`) and the translation
 * of a backend's apply-time conflicts both build their problems here, so
 * every backend refuses the same batch with the same words.
 */

function at(writeIndex: number, reason: BatchProblem["reason"], message: string): BatchProblem {
  return { writeIndex, reason, message };
}

/** `(kind "notes", scope c:7, key "a")`: how a refusal names a document address. */
export function describeAddress(record: Pick<NewDocumentRecord, "kind" | "scope" | "key">): string {
  const key = record.key === undefined ? "no key" : `key ${JSON.stringify(record.key)}`;
  return `address (kind ${JSON.stringify(record.kind)}, scope ${scopeKey(record.scope)}, ${key})`;
}

export const refusals = {
  conversationStored: (i: number, id: number) =>
    at(i, "immutable-record", `conversation ${id} is already stored`),
  entryStored: (i: number, id: number) =>
    at(i, "immutable-record", `entry ${id} is already stored`),
  forkOfUnknown: (i: number, id: number, parent: number) =>
    at(i, "unknown-conversation", `conversation ${id} forks from unknown conversation ${parent}`),
  unknownConversation: (
    i: number,
    type: "entry" | "task" | "submission",
    id: number,
    conversationId: number,
  ) => at(i, "unknown-conversation", `${type} ${id} names unknown conversation ${conversationId}`),
  documentExists: (i: number, id: number) => at(i, "duplicate-id", `document ${id} already exists`),
  addressOccupied: (
    i: number,
    record: Pick<NewDocumentRecord, "id" | "kind" | "scope" | "key">,
    holder: number | undefined,
  ) =>
    at(
      i,
      "address-occupied",
      `document ${record.id}: ${describeAddress(record)} already has ${holder === undefined ? "a live document" : `live document ${holder}`}`,
    ),
  unknownDocument: (i: number, id: number) =>
    at(i, "unknown-document", `document ${id} does not exist`),
  uncopyable: (i: number, id: number, why: string) =>
    at(i, "unknown-document", `document ${id} copy: ${why}`),
  retired: (i: number, id: number, retiredAt: number) =>
    at(i, "retired-document", `document ${id} was retired at seq ${retiredAt}`),
  retiredTwice: (i: number, id: number) =>
    at(i, "retired-document", `document ${id} is retired twice in one batch`),
  versionCrossing: (i: number, id: number, delta: number, current: number) =>
    at(
      i,
      "version-crossing",
      `document ${id}: a delta for version ${delta} on version ${current} (a version change needs a base)`,
    ),
  // Storing it would leave a document that can never be read again.
  deltaDoesNotApply: (i: number, id: number, why: string) =>
    at(i, "invalid-write", `document ${id} delta does not apply to its current value: ${why}`),
  notABatch: (i: number) => at(i, "invalid-write", "a batch must be an array of writes"),
  notJson: (i: number, message: string) => at(i, "invalid-write", message),
  tooLarge: (i: number, where: string, why: string) =>
    at(
      i,
      "invalid-write",
      `${where} cannot be stored: it is nested too deeply or too large to copy and serialise (${why})`,
    ),
};

/** Why a copy's source cannot be copied: the `why` of `refusals.uncopyable`. */
export const uncopyable = {
  missing: (source: number) => `source document ${source} does not exist`,
  notCommitted: (at: number, lastSeq: number) =>
    `source seq ${at} is not committed yet (newest committed seq is ${lastSeq})`,
  notLive: (source: number, at: number | "current") =>
    `source document ${source} is not live at ${at === "current" ? "current" : `seq ${at}`}`,
  unreadable: (source: number, at: number, why: string) =>
    `source document ${source} at seq ${at}: ${why}`,
};
