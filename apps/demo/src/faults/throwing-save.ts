import { Session, type EntryId, type Seq, type Storage } from "@durably/core";
import type { Backend } from "../backends.js";
import { createConversation, NOTES, saveNote } from "../experiment.js";
import { Notes } from "../notes.js";
import { lastSeq, readConversation, type ConversationState } from "../readback.js";

/** The error the faulty save's code throws. */
export class DemoSaveFailed extends Error {
  override readonly name = "DemoSaveFailed";
}

export interface ThrowingSaveOutcome {
  backend: Backend;
  before: ConversationState;
  /** What the commit promise rejected with (undefined if it resolved: a failure of the demo's claim). */
  rejection: unknown;
  /** The entry id the faulty save had appended before it threw. */
  attemptedEntryId: EntryId | undefined;
  /** `storage.entry(attemptedEntryId)` right after the throw, and after reopen. */
  attemptedEntryStored: boolean;
  afterThrow: ConversationState;
  snapshotAfterThrow: unknown;
  lastSeqBefore: number;
  /** The session goes on: the seq the next good save got, and the state after it. */
  nextSeq: Seq;
  afterNext: ConversationState;
  /** Read by a fresh open after close (persistent backends only). */
  afterReopen: ConversationState | undefined;
  attemptedEntryStoredAfterReopen: boolean;
}

async function isStored(storage: Storage, id: EntryId | undefined): Promise<boolean> {
  return id !== undefined && (await storage.entry(id)) !== undefined;
}

/**
 * A save whose code appends an entry, edits the notes, then throws. The
 * Session must discard it whole: nothing stored, nothing published, no seq
 * consumed; the same session goes on with the next save.
 */
export async function throwingSaveOn(backend: Backend, dir: string): Promise<ThrowingSaveOutcome> {
  const storage = await backend.open(dir);
  const session = await Session.open(storage);
  let outcome: Omit<ThrowingSaveOutcome, "afterReopen" | "attemptedEntryStoredAfterReopen">;
  try {
    const conversationId = await createConversation(session);
    for (const note of NOTES) await saveNote(session, conversationId, note);
    const before = await readConversation(storage, conversationId);
    let attemptedEntryId: EntryId | undefined;
    let rejection: unknown;
    try {
      await session.commit(async (tx) => {
        const entry = await tx.appendEntry(conversationId, { kind: "note", data: "never stored" });
        attemptedEntryId = entry.id;
        const notes = await tx.doc(Notes, conversationId);
        notes.text = "this edit must vanish";
        throw new DemoSaveFailed("the save's own code failed after writing");
      });
    } catch (error) {
      rejection = error;
    }
    const afterThrow = await readConversation(storage, conversationId);
    const snapshotAfterThrow = await session.snapshot(Notes, conversationId);
    const attemptedEntryStored = await isStored(storage, attemptedEntryId);
    const nextId = await saveNote(session, conversationId, "next");
    const next = await storage.entry(nextId);
    if (next === undefined) throw new Error(`entry ${nextId} was acknowledged but is not stored`);
    outcome = {
      backend,
      before,
      rejection,
      attemptedEntryId,
      attemptedEntryStored,
      afterThrow,
      snapshotAfterThrow,
      lastSeqBefore: lastSeq(before),
      nextSeq: next.commitSeq,
      afterNext: await readConversation(storage, conversationId),
    };
  } finally {
    await session.close();
  }
  if (!backend.persistent) {
    return { ...outcome, afterReopen: undefined, attemptedEntryStoredAfterReopen: false };
  }
  const again = await backend.open(dir);
  try {
    return {
      ...outcome,
      afterReopen: await readConversation(again, outcome.before.conversationId),
      attemptedEntryStoredAfterReopen: await isStored(again, outcome.attemptedEntryId),
    };
  } finally {
    await again.close();
  }
}
