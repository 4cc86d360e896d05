import type { ConversationId, DocumentId, Storage, StorageWrite, TaskId } from "@durably/core";

/** Fixed ids of the crash workload: the conversation, its rewindable counter document and its task. */
export const CONVERSATION = 1 as ConversationId;
export const COUNTER_DOC = 2 as DocumentId;
export const TASK = 3 as TaskId;
export const COUNTER_KIND = "crash.counter";

export const setupBatch: StorageWrite[] = [
  { type: "conversation", value: { id: CONVERSATION } },
  {
    type: "document.create",
    record: {
      id: COUNTER_DOC,
      kind: COUNTER_KIND,
      scope: { kind: "conversation", conversationId: CONVERSATION },
      history: "rewindable",
    },
    content: { kind: "base", version: 1, value: { count: 0 } },
  },
];

/** Commit number `n`: one entry, one document change and one task replacement, all carrying `n`. */
export function stepBatch(n: number, entryId: number): StorageWrite[] {
  return [
    {
      type: "entry",
      value: {
        id: entryId as never,
        conversationId: CONVERSATION,
        kind: "crash.step",
        data: { n },
      },
    },
    {
      type: "document.change",
      id: COUNTER_DOC,
      content: { kind: "delta", version: 1, ops: [["s", ["count"], n]] },
    },
    {
      type: "task",
      value: {
        id: TASK,
        conversationId: CONVERSATION,
        kind: "crash.task",
        version: 1,
        input: null,
        background: false,
        abortRequested: false,
        state: { status: "running", checkpoint: { n } },
      },
    },
  ];
}

/** The last committed step number (0 before the first step), or undefined before setup. */
export async function lastStep(storage: Storage): Promise<number | undefined> {
  const doc = await storage.document(COUNTER_DOC, "current");
  return doc === undefined ? undefined : (doc.value as { count: number }).count;
}
