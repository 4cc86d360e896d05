import { q } from "./checksums.js";

/**
 * The checksum formulas of schema version 3, frozen: migration 3 seals
 * rows with them, and migration 4 verifies them before it reseals the rows
 * it extends (entries, revisions, document state). The formulas of the
 * current version live in `checksums.ts`; never change these.
 */
export const v3ColumnText = {
  conversation: (id: number) => `\n${id}`,
  entry: (id: number, commitSeq: number) => `\n${id},${commitSeq}`,
  task: (id: number) => `\n${id}`,
  submission: (id: number) => `\n${id}`,
  document: (id: number, rewindable: number, createdAt: number) =>
    `\n${id},${rewindable},${createdAt}`,
  documentState: (id: number, version: number, baseSeq: number, retiredAt: number | null) =>
    `\n${id},${version},${baseSeq},${retiredAt}`,
  revision: (documentId: number, seq: number, kind: string, version: number) =>
    `\n${documentId},${seq},${q(kind)},${version}`,
  counter: (name: string, value: number) => `\n${q(name)},${value}`,
};

/**
 * The checksum formulas of schema version 4 that version 5 changed, frozen:
 * migration 4 seals the chains' ends with them (a document's newest
 * revision in its state checksum, `entry_tips` rows, the `next_seq` row of
 * `metadata`), and migration 5 verifies them before it moves those ends into
 * `tips`. Never change these.
 */
export const v4ColumnText = {
  documentState: (
    id: number,
    version: number,
    baseSeq: number,
    retiredAt: number | null,
    lastSeq: number,
  ) => `\n${id},${version},${baseSeq},${retiredAt},${lastSeq}`,
  tip: (conversationId: number, lastId: number, lastHead: number) =>
    `\n${conversationId},${lastId},${lastHead}`,
  counter: (name: string, value: number) => `\n${q(name)},${value}`,
};
