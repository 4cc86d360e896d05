import { afterEach, describe, expect, it } from "vitest";
import {
  StorageCorrupted,
  type ConversationId,
  type DocumentId,
  type StorageWrite,
  type SubmissionId,
} from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";
import { databasePerTest, editDatabase } from "./helpers.js";

// A row damaged (outside Durably) to an id outside 1..2^53 is met by the
// first page of a scan and reported, never passed over: a first page's
// statement has no id bound, and each row's checksum covers its id.

const C = 1 as ConversationId;
const scope = { kind: "conversation", conversationId: C } as const;
const database = databasePerTest("bounds.sqlite", (writer) =>
  writer.commit(
    [
      [
        { type: "conversation", value: { id: C } },
        {
          type: "task",
          value: {
            id: 2,
            conversationId: C,
            kind: "work",
            version: 1,
            input: null,
            background: false,
            abortRequested: false,
            state: { status: "pending", checkpoint: null },
          },
        } as StorageWrite,
        {
          type: "submission",
          value: { id: 3 as SubmissionId, conversationId: C, type: "input", status: "queued" },
        },
        {
          type: "document.create",
          record: { id: 4 as DocumentId, kind: "notes", scope },
          content: { kind: "base", version: 1, value: { n: 0 } },
        },
      ],
    ],
    () => undefined,
  ),
);
let storage: SqliteStorage | undefined;
afterEach(async () => {
  await storage?.close();
  storage = undefined;
});

const scans: [
  string,
  string,
  number,
  (s: SqliteStorage, order: "ascending" | "descending") => Promise<unknown>,
][] = [
  ["conversations", "conversations", 1, (s, order) => s.scanConversations({ order }, 10)],
  ["tasks", "tasks", 2, (s, order) => s.scanTasks({ order }, 10)],
  [
    "submissions",
    "submissions",
    3,
    (s, order) => s.scanSubmissions({ conversationId: C, order }, 10),
  ],
  ["documents", "documents", 4, (s, order) => s.scanDocuments({ scope, at: "current", order }, 10)],
];

describe("SqliteStorage > a row damaged to an id outside the ids Durably writes is met by a scan's first page", () => {
  for (const [name, table, id, scan] of scans)
    for (const [damaged, order] of [
      ["-2", "ascending"],
      ["0", "ascending"],
      ["9007199254740993", "descending"],
    ] as const)
      it(`${name}: id ${id} changed to ${damaged}, the first page in ${order} order rejects with StorageCorrupted naming the table`, async () => {
        // The submission's conversation column keeps it in the scan; only the id changes.
        editDatabase(database.path, `UPDATE ${table} SET id = ${damaged} WHERE id = ${id}`);
        storage = await openSqliteStorage(database.path);
        const error = await scan(storage, order).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StorageCorrupted);
        expect(error).toMatchObject({ location: { table } });
      });
});
