import type { ContentPart } from "../domain/records.js";
import { defineDoc } from "../session/tokens.js";

/** A submission waiting for the running answer to finish (its record is `queued`). */
export type QueuedInput = {
  submissionId: number;
  content: string | ContentPart[];
  /** The model that is to answer it, when the input named one. */
  model?: string;
};

export type InboxState = { queued: QueuedInput[] };

/**
 * `durably.inbox`: inputs submitted while the conversation was busy, in
 * submission order. The first is placed in the same commit that settles the
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
