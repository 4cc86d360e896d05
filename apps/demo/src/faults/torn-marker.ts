import { readFile, truncate } from "node:fs/promises";
import { join } from "node:path";
import { Session, type EntryId } from "@durably/core";
import { BACKENDS } from "../backends.js";
import { fileLines } from "../dump/jsonl.js";
import { createConversation, NOTES, saveNote } from "../experiment.js";
import { readConversation, type ConversationState } from "../readback.js";

const NEWLINE = 0x0a;

export interface TornMarkerOutcome {
  dir: string;
  /** Storage after save 1 and after save 2, as acknowledged. */
  afterSave: ConversationState[];
  secondEntryId: EntryId;
  /** The last line of main.jsonl before and after the cut. */
  markerLine: string;
  tornLine: string;
  /** main.jsonl lines after the cut (the torn one last) and after recovery. */
  linesBefore: string[];
  linesRecovered: string[];
  /** The notes document's sidecar, before the cut and after recovery. */
  sidecar: string;
  sidecarBefore: string[];
  sidecarRecovered: string[];
  reopened: ConversationState;
  secondEntryStored: boolean;
}

/**
 * Simulates a crash while the last commit marker was being appended: the
 * experiment runs on JSONL, then the final line of main.jsonl is cut in
 * half on disk. Reopening must recover exactly the first save.
 */
export async function tornMarker(dir: string): Promise<TornMarkerOutcome> {
  const backend = BACKENDS.jsonl;
  const storage = await backend.open(dir);
  const session = await Session.open(storage);
  const afterSave: ConversationState[] = [];
  const entryIds: EntryId[] = [];
  let conversationId;
  try {
    conversationId = await createConversation(session);
    for (const note of NOTES) {
      entryIds.push(await saveNote(session, conversationId, note));
      afterSave.push(await readConversation(storage, conversationId));
    }
  } finally {
    await session.close();
  }
  const secondEntryId = entryIds[1];
  if (secondEntryId === undefined) throw new Error("the experiment made fewer than two saves");

  const main = join(dir, "main.jsonl");
  const documentId = afterSave.at(-1)?.notes?.documentId;
  if (documentId === undefined) throw new Error(`${dir}: the experiment stored no notes document`);
  const sidecar = `doc-${documentId}.jsonl`;
  const sidecarBefore = fileLines(await readFile(join(dir, sidecar), "utf8"));
  const bytes = await readFile(main);
  if (bytes.at(-1) !== NEWLINE)
    throw new Error(`${main}: expected a complete last line before the cut`);
  const start = bytes.lastIndexOf(NEWLINE, bytes.length - 2) + 1;
  const marker = bytes.subarray(start, bytes.length - 1);
  // Cut by bytes, as a crash would: the file now ends in the middle of the marker.
  const keep = start + Math.floor(marker.length / 2);
  await truncate(main, keep);
  const markerLine = marker.toString("utf8");
  const tornLine = bytes.subarray(start, keep).toString("utf8");

  const again = await backend.open(dir);
  let reopened: ConversationState;
  let secondEntryStored: boolean;
  try {
    reopened = await readConversation(again, conversationId);
    secondEntryStored = (await again.entry(secondEntryId)) !== undefined;
  } finally {
    await again.close();
  }
  return {
    dir,
    afterSave,
    secondEntryId,
    markerLine,
    tornLine,
    linesBefore: fileLines(bytes.toString("utf8")),
    linesRecovered: fileLines(await readFile(main, "utf8")),
    sidecar,
    sidecarBefore,
    sidecarRecovered: fileLines(await readFile(join(dir, sidecar), "utf8")),
    reopened,
    secondEntryStored,
  };
}
