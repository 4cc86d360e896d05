import type {
  Batch,
  ConversationId,
  DocumentId,
  EntryId,
  JsonObject,
  Seq,
  Storage,
  StorageWrite,
  TaskId,
  TaskRecord,
} from "@durably/core";

/** Small builders for raw storage writes, so tests read as what they store. */
export const w = {
  conversation: (id: number): StorageWrite => ({
    type: "conversation",
    value: { id: id as ConversationId },
  }),
  entry: (id: number, conversationId: number, data: string): StorageWrite => ({
    type: "entry",
    value: {
      id: id as EntryId,
      conversationId: conversationId as ConversationId,
      kind: "note",
      data,
    },
  }),
  createDoc: (
    id: number,
    conversationId: number,
    value: JsonObject,
    history?: "rewindable",
  ): StorageWrite => ({
    type: "document.create",
    record: {
      id: id as DocumentId,
      kind: `app.doc${id}`,
      scope: { kind: "conversation", conversationId: conversationId as ConversationId },
      ...(history ? { history } : {}),
    },
    content: { kind: "base", version: 1, value },
  }),
  base: (id: number, value: JsonObject): StorageWrite => ({
    type: "document.change",
    id: id as DocumentId,
    content: { kind: "base", version: 1, value },
  }),
  setText: (id: number, text: string): StorageWrite => ({
    type: "document.change",
    id: id as DocumentId,
    content: { kind: "delta", version: 1, ops: [["s", ["text"], text]] },
  }),
  retire: (id: number): StorageWrite => ({ type: "document.retire", id: id as DocumentId }),
  task: (id: number, conversationId: number, state: TaskRecord["state"]): StorageWrite => ({
    type: "task",
    value: {
      id: id as TaskId,
      conversationId: conversationId as ConversationId,
      kind: "app.task",
      version: 1,
      input: null,
      background: false,
      abortRequested: false,
      state,
    },
  }),
};

/** Commits batches, expecting all of them stored; returns their seqs. */
export async function commitAll(storage: Storage, ...batches: Batch[]): Promise<number[]> {
  const seqs: number[] = [];
  const result = await storage.commit(batches, (_i, seq: Seq) => seqs.push(seq));
  if (result.refused !== undefined) throw result.refused;
  return seqs;
}
