import type {
  ConversationId,
  Cursor,
  DocumentId,
  EntryId,
  Page,
  Seq,
  Storage,
  StorageWrite,
  SubmissionId,
  TaskId,
  TaskQuery,
} from "@durably/core";

/*
 * A fixture for adapter authors who check their query plans: one commit call
 * that takes every write path, then every read path with each filter
 * combination and both orders. Record the statements your storage runs while
 * it executes, then EXPLAIN each one (see the SQLite and PostgreSQL adapters).
 */

const C = 1 as ConversationId;
const F = 20 as ConversationId;
const scope = { kind: "conversation", conversationId: C } as const;
const task = (id: number, extra: object = {}): StorageWrite =>
  ({
    type: "task",
    value: {
      id,
      conversationId: C,
      kind: "work",
      version: 1,
      input: null,
      background: false,
      abortRequested: false,
      state: { status: "pending", checkpoint: null },
      ...extra,
    },
  }) as StorageWrite;

/** Runs every write path and every read path of the Storage port once against a fresh, empty storage. */
export async function exerciseAccessPaths(storage: Storage): Promise<void> {
  // Two calls: a copy reads a committed seq, which a batch of the same call is not yet.
  const stored = async (batches: StorageWrite[][]): Promise<void> => {
    const result = await storage.commit(batches, () => undefined);
    if (result.refused)
      throw new Error(`the access-path fixture was refused: ${JSON.stringify(result.refused)}`);
  };
  await stored([
    [
      { type: "conversation", value: { id: C } },
      { type: "entry", value: { id: 2 as EntryId, conversationId: C, kind: "note", data: 1 } },
      {
        type: "entry",
        value: { id: 3 as EntryId, conversationId: C, kind: "head", head: 3 as EntryId },
      },
      task(4),
      task(5, { owner: 4 as TaskId, background: true, abortRequested: true }),
      {
        type: "submission",
        value: {
          id: 6 as SubmissionId,
          conversationId: C,
          type: "input",
          status: "queued",
          requestId: "r1",
        },
      },
      {
        type: "document.create",
        record: { id: 7 as DocumentId, kind: "notes", scope, history: "rewindable" },
        content: { kind: "base", version: 1, value: { n: 0 } },
      },
      {
        type: "document.create",
        record: { id: 8 as DocumentId, kind: "live", key: "k", scope },
        content: { kind: "base", version: 1, value: { n: 0 } },
      },
    ],
    [
      {
        type: "document.change",
        id: 7 as DocumentId,
        content: { kind: "delta", version: 1, ops: [["s", ["n"], 1]] },
      },
      {
        type: "document.change",
        id: 8 as DocumentId,
        content: { kind: "base", version: 1, value: { n: 5 } },
      },
    ],
  ]);
  await stored([
    [
      {
        type: "document.change",
        id: 7 as DocumentId,
        content: { kind: "base", version: 1, value: { n: 2 } },
      },
      {
        type: "conversation",
        value: {
          id: F,
          parent: { conversationId: C, at: 3 as EntryId },
          owner: { conversationId: C, taskId: 4 as TaskId },
        },
      },
      { type: "entry", value: { id: 21 as EntryId, conversationId: F, kind: "note" } },
      {
        type: "document.copy",
        record: {
          id: 22 as DocumentId,
          kind: "notes",
          scope: { kind: "conversation", conversationId: F },
        },
        source: { id: 7 as DocumentId, at: 1 as Seq },
      },
      {
        type: "document.copy",
        record: {
          id: 23 as DocumentId,
          kind: "live",
          key: "k",
          scope: { kind: "conversation", conversationId: F },
        },
        source: { id: 8 as DocumentId, at: "current" },
      },
    ],
    [
      { type: "document.retire", id: 8 as DocumentId },
      { type: "document.retire", id: 22 as DocumentId },
    ],
  ]);
  // Every read path, each filter combination and both orders; scans of one item also read their
  // next page, whose statement bounds the id from the cursor (the first page's does not).
  const twoPages = async <Q>(
    scan: (query: Q, limit: number, cursor?: Cursor) => Promise<Page<unknown>>,
    query: Q,
    limit = 1,
  ): Promise<void> => {
    const first = await scan(query, limit);
    if (first.next !== undefined) await scan(query, limit, first.next);
  };
  await storage.conversation(C);
  for (const order of ["ascending", "descending"] as const) {
    await twoPages(storage.scanConversations.bind(storage), { order });
    await twoPages(storage.scanConversations.bind(storage), { ownerTaskId: 4 as TaskId, order });
    await twoPages(storage.scanEntries.bind(storage), { conversationId: C, order });
    await twoPages(storage.scanEntries.bind(storage), { conversationId: F, order });
    await twoPages(
      storage.scanEntries.bind(storage),
      { conversationId: F, minEntryId: 2 as EntryId, maxEntryId: 21 as EntryId, order },
      10,
    );
    await twoPages(storage.scanSubmissions.bind(storage), { conversationId: C, order });
    await twoPages(storage.scanSubmissions.bind(storage), {
      conversationId: C,
      status: "queued",
      order,
    });
    const fields: [keyof TaskQuery, unknown][] = [
      ["conversationId", C],
      ["kind", "work"],
      ["status", "pending"],
      ["abortRequested", true],
      ["background", false],
      ["owner", 4],
    ];
    for (let mask = 0; mask < 1 << fields.length; mask++) {
      const query: Record<string, unknown> = { order };
      fields.forEach(([field, value], i) => {
        if (mask & (1 << i)) query[field] = value;
      });
      await twoPages(storage.scanTasks.bind(storage), query);
    }
    for (const kind of [undefined, "notes"])
      for (const at of ["current", 2] as const)
        await twoPages(storage.scanDocuments.bind(storage), {
          scope,
          at: at as Seq | "current",
          ...(kind ? { kind } : {}),
          order,
        });
  }
  await storage.entry(2 as EntryId);
  await storage.latestHead(F);
  await storage.latestHead(F, 2 as EntryId);
  await storage.task(4 as TaskId);
  await storage.submission(6 as never);
  await storage.submissionByRequest(C, "r1");
  await storage.findDocument({ kind: "live", key: "k", scope }, "current");
  await storage.findDocument({ kind: "live", key: "k", scope }, 2 as Seq);
  await storage.findDocument({ kind: "notes", scope }, 2 as Seq);
  await storage.document(7 as DocumentId, "current");
  await storage.document(7 as DocumentId, 2 as Seq);
  await storage.document(8 as DocumentId, 2 as Seq).catch(() => undefined); // history-unavailable, by design
}
