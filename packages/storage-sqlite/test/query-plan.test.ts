import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  ConversationId,
  DocumentId,
  EntryId,
  Seq,
  StorageWrite,
  SubmissionId,
  TaskId,
  TaskQuery,
} from "@durably/core";
import { BetterSqlite3Database, REVISION_ROWS_SQL, SqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { RecordingDatabase } from "./recording-database.js";

/** Tables that grow with use; a full scan of any of them is a bug. */
const GROWING = [
  "conversations",
  "entries",
  "tasks",
  "submissions",
  "documents",
  "document_revisions",
];

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

let dir: ReturnType<typeof tempDir>;
let recording: RecordingDatabase;
let storage: SqliteStorage;

beforeAll(async () => {
  dir = tempDir();
  const path = join(dir.dir, "plan.sqlite");
  recording = new RecordingDatabase(BetterSqlite3Database.open(path));
  storage = await SqliteStorage.open(recording, { location: path });
  const receive = () => undefined;
  // Every write path: records of each table, documents created, copied (current and at a seq), changed, retired.
  await storage.commit(
    [
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
    ],
    receive,
  );
  // Every read path, each filter combination and both orders.
  await storage.conversation(C);
  for (const order of ["ascending", "descending"] as const) {
    await storage.scanConversations({ order }, 1);
    await storage.scanConversations({ ownerTaskId: 4 as TaskId, order }, 1);
    await storage.scanEntries({ conversationId: F, order }, 1);
    await storage.scanEntries(
      { conversationId: F, minEntryId: 2 as EntryId, maxEntryId: 21 as EntryId, order },
      10,
    );
    await storage.scanSubmissions({ conversationId: C, order }, 1);
    await storage.scanSubmissions({ conversationId: C, status: "queued", order }, 1);
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
      await storage.scanTasks(query, 1);
    }
    for (const kind of [undefined, "notes"])
      for (const at of ["current", 2] as const)
        await storage.scanDocuments(
          { scope, at: at as Seq | "current", ...(kind ? { kind } : {}), order },
          1,
        );
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
});

afterAll(async () => {
  await storage.close();
  dir.cleanup();
});

async function fullScans(
  sql: string,
  params: readonly (string | number | null)[],
): Promise<string[]> {
  const plan = await recording.inner.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
  return plan
    .filter(({ detail }) => {
      const scan = /^SCAN (\w+)/.exec(detail);
      return (scan !== null && GROWING.includes(scan[1] as string)) || /TEMP B-TREE/.test(detail);
    })
    .map(({ detail }) => `${detail}\n    in: ${sql}`);
}

describe("EXPLAIN QUERY PLAN", () => {
  it("the check itself flags a full scan (the demo's whole-table listing is one, on purpose)", async () => {
    expect((await fullScans(REVISION_ROWS_SQL, [])).length).toBeGreaterThan(0);
  });

  it("every statement the storage runs reads growing tables by index range, never a full scan or a sort", async () => {
    const distinct = new Map<string, (typeof recording.statements)[number]>();
    for (const s of recording.statements)
      if (/^\s*(SELECT|INSERT|UPDATE|DELETE)\b/i.test(s.sql)) distinct.set(s.sql, s);
    expect(distinct.size).toBeGreaterThan(40);
    const offenders: string[] = [];
    for (const { sql, params } of distinct.values())
      offenders.push(...(await fullScans(sql, params)));
    if (process.env.DURABLY_SHOW_PLANS)
      for (const { sql, params } of distinct.values())
        console.log(
          sql,
          (await recording.inner.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map(
            (p) => p.detail,
          ),
        );
    expect(offenders).toEqual([]);
  });
});
