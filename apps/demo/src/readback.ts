import type { ConversationId, DocumentId, Json, Seq, Storage } from "@durably/core";
import { Notes } from "./notes.js";
import { scanAll } from "./scan.js";

export interface StoredEntry {
  id: number;
  kind: string;
  data: Json | undefined;
  commitSeq: Seq;
}

export interface StoredNotes {
  documentId: DocumentId;
  createdAt: Seq;
  version: number;
  value: Json;
  deltasSinceBase: number;
}

/** What storage holds for one conversation of the experiment, read only through the Storage port. */
export interface ConversationState {
  conversationId: ConversationId;
  entries: StoredEntry[];
  notes: StoredNotes | undefined;
}

/** Reads the conversation's own entries (oldest first, each with its commit seq) and its current notes. */
export async function readConversation(
  storage: Storage,
  conversationId: ConversationId,
): Promise<ConversationState> {
  const records = await scanAll((limit, cursor) =>
    storage.scanEntries({ conversationId, order: "ascending" }, limit, cursor),
  );
  const entries: StoredEntry[] = [];
  for (const record of records) {
    const stored = await storage.entry(record.id);
    if (stored === undefined) {
      throw new Error(`entry ${record.id} was scanned but entry(${record.id}) found nothing`);
    }
    entries.push({
      id: record.id,
      kind: record.kind,
      data: record.data,
      commitSeq: stored.commitSeq,
    });
  }
  const found = await storage.findDocument(
    { kind: Notes.kind, scope: { kind: "conversation", conversationId } },
    "current",
  );
  let notes: StoredNotes | undefined;
  if (found !== undefined) {
    const doc = await storage.document(found.id, "current");
    if (doc === undefined) throw new Error(`document ${found.id} was found but reads as absent`);
    notes = {
      documentId: found.id,
      createdAt: found.createdAt,
      version: doc.version,
      value: doc.value,
      deltasSinceBase: doc.deltasSinceBase,
    };
  }
  return { conversationId, entries, notes };
}

/** The highest commit seq the conversation's entries carry (the seq of its newest save). */
export function lastSeq(state: ConversationState): number {
  return Math.max(0, ...state.entries.map((entry) => entry.commitSeq));
}
