import type { Json } from "../domain/json.js";
import type { ContentPart } from "../domain/records.js";
import { defineDoc } from "../session/tokens.js";

/** A submission waiting for the running answer to finish (its record is `queued`). */
export type QueuedInput = {
  submissionId: number;
  content: string | ContentPart[];
  /** The model that is to answer it, when the input named one. */
  model?: string;
};

/** An app entry submitted with `submit({ type: "write", entry })`. */
export type WriteEntry = { kind: string; data?: Json };

/** A write waiting its turn: appended when the inputs before it have been answered. */
export type QueuedWrite = { submissionId: number; write: WriteEntry };

export type InboxState = {
  queued: (QueuedInput | QueuedWrite)[];
  /**
   * Inputs submitted with `whenBusy: "steer"`: the running answer takes
   * them at its next model call (after the current tool results). Absent
   * while there are none.
   */
  steered?: QueuedInput[];
};

/**
 * `durably.inbox`: inputs and writes submitted while the conversation was
 * busy, in submission order, and inputs steered into the running answer.
 * The first queued item is placed in the same commit that settles the
 * running submission. A fork starts empty.
 */
export const InboxDoc = defineDoc<InboxState, "conversation">({
  kind: "durably.inbox",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ queued: [] }),
});
