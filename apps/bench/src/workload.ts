import {
  defineDoc,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type Op,
  type Session,
  type Storage,
  type StorageWrite,
  type Transaction,
} from "@durably/core";

/**
 * The commit every benchmark measures: one entry appended to the writer's
 * conversation plus one delta to that conversation's state document. Raw
 * baselines write exactly these rows, lines or keys.
 */
export const StepState = defineDoc<{ n: number; note: string }>({
  kind: "bench.state",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ n: 0, note: "" }),
});

export const ENTRY_KIND = "bench.step";

export function stepData(n: number): { n: number; text: string } {
  return { n, text: `step ${n}: one unit of agent work` };
}

/** The document change of step `n`: what the draft tracker emits for `state.n = n`. */
export function stepOps(n: number): Op[] {
  return [["s", ["n"], n]];
}

/** Step `n` through the Session. */
export async function sessionStep(
  tx: Transaction,
  conversationId: ConversationId,
  n: number,
): Promise<void> {
  await tx.appendEntry(conversationId, { kind: ENTRY_KIND, data: stepData(n) });
  (await tx.doc(StepState, conversationId)).n = n;
}

/** One conversation with its state document per writer, created in one commit. */
export async function createWriterConversations(
  session: Session,
  writers: number,
): Promise<ConversationId[]> {
  return session.commit(async (tx) => {
    const ids: ConversationId[] = [];
    for (let i = 0; i < writers; i++) {
      const { id } = await tx.createConversation({ ownership: { kind: "ownerless" } });
      await tx.doc(StepState, id);
      ids.push(id);
    }
    return ids;
  });
}

export interface RawWriter {
  conversationId: ConversationId;
  documentId: DocumentId;
}

/** The storage writes of step `n` (what the Session hands to `storage.commit`). */
export function stepWrites(writer: RawWriter, entryId: EntryId, n: number): StorageWrite[] {
  return [
    {
      type: "entry",
      value: {
        id: entryId,
        conversationId: writer.conversationId,
        kind: ENTRY_KIND,
        data: stepData(n),
      },
    },
    {
      type: "document.change",
      id: writer.documentId,
      content: { kind: "delta", version: StepState.version, ops: stepOps(n) },
    },
  ];
}

/** Without a Session: the root conversation plus one conversation and state document per writer. */
export async function seedRawWriters(storage: Storage, writers: number): Promise<RawWriter[]> {
  const out: RawWriter[] = [];
  const writes: StorageWrite[] = [{ type: "conversation", value: { id: 1 as ConversationId } }];
  for (let i = 0; i < writers; i++) {
    const conversationId = (await storage.mintId()) as ConversationId;
    const documentId = (await storage.mintId()) as DocumentId;
    writes.push(
      { type: "conversation", value: { id: conversationId } },
      {
        type: "document.create",
        record: {
          id: documentId,
          kind: StepState.kind,
          scope: { kind: "conversation", conversationId },
        },
        content: { kind: "base", version: StepState.version, value: StepState.initial() },
      },
    );
    out.push({ conversationId, documentId });
  }
  const result = await storage.commit([writes], () => undefined);
  if (result.refused) throw result.refused;
  return out;
}
