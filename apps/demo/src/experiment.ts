import {
  Session,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type Json,
  type Seq,
  type Storage,
} from "@durably/core";
import { Notes } from "./notes.js";
import { readConversation, type ConversationState } from "./readback.js";

/** The two saves of the experiment: each appends this note and rewrites the notes document. */
export const NOTES = ["hello", "goodbye"] as const;

export const notesText = (note: string): string => `after ${note}`;

export interface SaveOutcome {
  note: string;
  entryId: EntryId;
  seq: Seq;
  /** What storage holds right after this save was acknowledged. */
  state: ConversationState;
  /** The notes value read at this save's seq, and at the seq before it (undefined: not yet created). */
  notesAt: Json | undefined;
  notesBefore: Json | undefined;
}

export interface ExperimentRun {
  conversationId: ConversationId;
  saves: SaveOutcome[];
  /** `session.snapshot(Notes, conversation)` after the last save. */
  snapshot: Json | undefined;
}

export async function createConversation(session: Session): Promise<ConversationId> {
  return session.commit(async (tx) => {
    const conversation = await tx.createConversation({ ownership: { kind: "ownerless" } });
    return conversation.id;
  });
}

/** One save: append a note entry and change the notes document, all or nothing. Returns the entry id. */
export async function saveNote(
  session: Session,
  conversationId: ConversationId,
  note: string,
): Promise<EntryId> {
  return session.commit(async (tx) => {
    const entry = await tx.appendEntry(conversationId, { kind: "note", data: note });
    const notes = await tx.doc(Notes, conversationId);
    notes.text = notesText(note);
    return entry.id;
  });
}

async function seqOf(storage: Storage, entryId: EntryId): Promise<Seq> {
  const stored = await storage.entry(entryId);
  if (stored === undefined) throw new Error(`entry ${entryId} was acknowledged but is not stored`);
  return stored.commitSeq;
}

async function notesAt(storage: Storage, id: DocumentId, seq: Seq): Promise<Json | undefined> {
  return (await storage.document(id, seq))?.value;
}

/**
 * The storage experiment on an open session: create a conversation, then
 * the two saves, reading back what storage holds after each one.
 */
export async function runExperiment(session: Session, storage: Storage): Promise<ExperimentRun> {
  const conversationId = await createConversation(session);
  const saves: SaveOutcome[] = [];
  for (const note of NOTES) {
    const entryId = await saveNote(session, conversationId, note);
    const seq = await seqOf(storage, entryId);
    const state = await readConversation(storage, conversationId);
    const documentId = state.notes?.documentId;
    saves.push({
      note,
      entryId,
      seq,
      state,
      notesAt: documentId === undefined ? undefined : await notesAt(storage, documentId, seq),
      notesBefore:
        documentId === undefined || seq <= 1
          ? undefined
          : await notesAt(storage, documentId, (seq - 1) as Seq),
    });
  }
  const conversation = await storage.conversation(conversationId);
  if (conversation === undefined) throw new Error(`conversation ${conversationId} is not stored`);
  return {
    conversationId,
    saves,
    snapshot: (await session.snapshot(Notes, conversationId)) as Json | undefined,
  };
}
