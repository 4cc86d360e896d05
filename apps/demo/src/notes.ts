import { defineDoc } from "@durably/core";

/** The experiment's application state: one notes document per conversation. */
export const Notes = defineDoc<{ text: string }, "conversation">({
  kind: "demo.notes",
  version: 1,
  scope: "conversation",
  // Rewindable so the demo can read the document as of each save's seq.
  history: "rewindable",
  fork: "initial",
  initial: () => ({ text: "" }),
});
