import {
  StorageCorrupted,
  type ConversationId,
  type DocumentId,
  type EntryId,
  type StorageWrite,
} from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost, type PostgresStorage } from "../src/index.js";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";
import { createNote } from "./support/documents.js";

/**
 * Bigint columns holding a value beyond JavaScript's safe integers (a damaged
 * row, a hand edit, another writer): every read that meets one reports it as
 * `StorageCorrupted` naming the session, table, column and row, and changes
 * nothing; no scan skips the row and no open rounds it.
 */
const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

/** 2^53 + 1: the smallest positive integer a JavaScript number cannot hold. */
const BEYOND = "9007199254740993";
const C = 1 as ConversationId;
const conversation = { type: "conversation", value: { id: C } } as StorageWrite;
const entry = (id: number): StorageWrite =>
  ({ type: "entry", value: { id, conversationId: C, kind: "note" } }) as StorageWrite;

/** Every row of `table` for the session, as the server prints it (exact, whatever the values). */
async function rows(table: string, session: string): Promise<string[]> {
  const found = await pool!.query<{ row: string }>(
    `SELECT t::text AS row FROM durably.${table} t WHERE session_key = $1 ORDER BY 1`,
    [session],
  );
  return found.rows.map((r) => r.row);
}

/** Conversation 1 with entries 2 and 3, through a storage left open. */
async function withEntries(
  prefix: string,
  work: (storage: PostgresStorage, session: string) => Promise<void>,
): Promise<void> {
  const session = freshSession(prefix);
  const storage = await openTestStorage(session);
  try {
    await storage.commit([[conversation, entry(2), entry(3)]], () => undefined);
    await work(storage, session);
  } finally {
    await storage.close();
  }
}

/** `read` rejects with StorageCorrupted at `location`, naming the column and value; the table is unchanged. */
async function expectCorrupted(
  table: string,
  session: string,
  read: () => Promise<unknown>,
  expected: { key: string; column: string; value: string; documentId?: number },
): Promise<void> {
  const before = await rows(table, session);
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageCorrupted);
  const documentId = expected.documentId === undefined ? {} : { documentId: expected.documentId };
  expect((error as StorageCorrupted).location).toEqual({ table, key: expected.key, ...documentId });
  const message = (error as Error).message;
  expect(message).toContain(JSON.stringify(session));
  expect(message).toContain(` ${table} `);
  expect(message).toContain(`the ${expected.column} column holds ${expected.value}`);
  expect(await rows(table, session)).toEqual(before);
}

/** `read` rejects with StorageCorrupted naming a row whose id is not positive; the table is unchanged. */
async function expectNotPositive(
  session: string,
  read: () => Promise<unknown>,
  expected: { table: string; key: string; value: string },
): Promise<void> {
  const before = await rows(expected.table, session);
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageCorrupted);
  expect(error).toMatchObject({ location: { table: expected.table, key: expected.key } });
  expect((error as Error).message).toBe(
    `session ${JSON.stringify(session)} ${expected.table}: the id column holds ${expected.value}, not a positive integer (the row was damaged or written by something else)`,
  );
  expect(await rows(expected.table, session)).toEqual(before);
}

describe.skipIf(!PG_URL)("PostgresStorage > bigints beyond the safe integers", () => {
  it("an entry id beyond them fails both scan orders and latestHead, naming the row; it is never skipped", async () => {
    await withEntries("big-entry", async (storage, session) => {
      await pool!.query(
        `UPDATE durably.entries SET id = ${BEYOND}, is_head = TRUE WHERE session_key = $1 AND id = 3`,
        [session],
      );
      const expected = { key: `${session}/${BEYOND}`, column: "id", value: BEYOND };
      for (const order of ["descending", "ascending"] as const)
        await expectCorrupted(
          "entries",
          session,
          () => storage.scanEntries({ conversationId: C, order }, 10),
          expected,
        );
      await expectCorrupted("entries", session, () => storage.latestHead(C), expected);
      // A scan bounded below it does not meet it, and reads the rest as before.
      const bounded = await storage.scanEntries(
        { conversationId: C, maxEntryId: 2 as EntryId },
        10,
      );
      expect(bounded.items.map((e) => e.id)).toEqual([2]);
    });
  });

  it("an entry id below the negative safe integers fails an ascending scan, never skipped", async () => {
    await withEntries("neg-entry", async (storage, session) => {
      const below = `-${BEYOND}`;
      await pool!.query(
        `UPDATE durably.entries SET id = ${below} WHERE session_key = $1 AND id = 3`,
        [session],
      );
      await expectCorrupted(
        "entries",
        session,
        () => storage.scanEntries({ conversationId: C, order: "ascending" }, 10),
        { key: `${session}/${below}`, column: "id", value: below },
      );
    });
  });

  for (const id of [0, -2])
    it(`an id of ${id} (safe, but never written by Durably) fails the scans that meet it, naming the row; it is never returned`, async () => {
      await withEntries(`nonpositive-${-id}`, async (storage, session) => {
        await pool!.query(
          `UPDATE durably.entries SET id = ${id} WHERE session_key = $1 AND id = 3`,
          [session],
        );
        await pool!.query(
          `INSERT INTO durably.conversations (session_key, id, owner_task_id, record)
             SELECT session_key, ${id}, owner_task_id, record FROM durably.conversations WHERE session_key = $1 AND id = 1`,
          [session],
        );
        const expected = (table: string) => ({
          key: `${session}/${id}`,
          column: "id",
          value: String(id),
          table,
        });
        for (const order of ["descending", "ascending"] as const) {
          await expectNotPositive(
            session,
            () => storage.scanEntries({ conversationId: C, order }, 10),
            expected("entries"),
          );
          await expectNotPositive(
            session,
            () => storage.scanConversations({ order }, 10),
            expected("conversations"),
          );
        }
      });
    });

  it("a conversation id beyond them fails the first page of either scan order", async () => {
    await withEntries("big-conv", async (storage, session) => {
      await pool!.query(
        `INSERT INTO durably.conversations (session_key, id, owner_task_id, record)
           SELECT session_key, ${BEYOND}, owner_task_id, record FROM durably.conversations WHERE session_key = $1 AND id = 1`,
        [session],
      );
      for (const order of ["descending", "ascending"] as const)
        await expectCorrupted(
          "conversations",
          session,
          () => storage.scanConversations({ order }, 10),
          { key: `${session}/${BEYOND}`, column: "id", value: BEYOND },
        );
    });
  });

  it("a commit_seq beyond them fails the point read of its entry, naming the column and row", async () => {
    await withEntries("big-seq", async (storage, session) => {
      await pool!.query(
        `UPDATE durably.entries SET commit_seq = ${BEYOND} WHERE session_key = $1 AND id = 2`,
        [session],
      );
      await expectCorrupted("entries", session, () => storage.entry(2 as EntryId), {
        key: `${session}/2`,
        column: "commit_seq",
        value: BEYOND,
      });
    });
  });

  it("a revision seq beyond them fails a current read of its document, never skipped", async () => {
    const session = freshSession("big-rev");
    const storage = await openTestStorage(session);
    try {
      const D = 10 as DocumentId;
      await createNote(storage, D);
      await pool!.query(
        `INSERT INTO durably.document_revisions (session_key, document_id, seq, kind, content, version)
           SELECT session_key, document_id, ${BEYOND}, 'delta', '[]', version + 1
             FROM durably.document_revisions WHERE session_key = $1 AND document_id = 10`,
        [session],
      );
      await expectCorrupted("document_revisions", session, () => storage.document(D, "current"), {
        key: `${session}/10`,
        documentId: 10,
        column: "seq",
        value: BEYOND,
      });
    } finally {
      await storage.close();
    }
  });

  /** A closed session whose row then had `column` set to `value`, and the row as it was left. */
  async function damagedSession(prefix: string, column: string, value: string) {
    const session = freshSession(prefix);
    const storage = await openTestStorage(session);
    await storage.commit([[conversation, entry(2)]], () => undefined);
    await storage.close();
    await pool!.query(`UPDATE durably.sessions SET ${column} = ${value} WHERE session_key = $1`, [
      session,
    ]);
    return { session, row: await rows("sessions", session) };
  }

  const COUNTERS: [column: string, value: string][] = [
    ["next_seq", BEYOND],
    ["high_water", BEYOND],
    ["lease_token", BEYOND],
    ["next_seq", `-${BEYOND}`],
    // Safe, but the take-over's token would be one past the safe integers.
    ["lease_token", "9007199254740991"],
  ];

  it.each(COUNTERS)(
    "sessions.%s = %s is refused at open with StorageCorrupted naming session, table and column; the row is untouched",
    async (column, value) => {
      const { session, row } = await damagedSession("big-row", column, value);
      const error = await openTestStorage(session).then(
        async (storage) => {
          await storage.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(error).toMatchObject({ location: { table: "sessions", key: session } });
      expect((error as Error).message).toContain(
        `session ${JSON.stringify(session)} sessions: the ${column} column holds ${value}`,
      );
      expect(await rows("sessions", session)).toEqual(row);
    },
  );

  it("a host refuses the damaged session alone and goes on opening the others", async () => {
    const { session, row } = await damagedSession("big-host", "lease_token", BEYOND);
    const host = await openPostgresHost({ connectionString: PG_URL, maxConnections: 3 });
    try {
      await expect(host.open(session)).rejects.toMatchObject({
        name: "StorageCorrupted",
        location: { table: "sessions", key: session },
        message: expect.stringContaining(`the lease_token column holds ${BEYOND}`) as unknown,
      });
      expect(await rows("sessions", session)).toEqual(row);
      // The refused session is not left "opening": fixed, it opens through the same host.
      await pool!.query("UPDATE durably.sessions SET lease_token = 7 WHERE session_key = $1", [
        session,
      ]);
      const healed = await host.open(session);
      expect((await healed.entry(2 as EntryId))?.entry.id).toBe(2);
      const other = await host.open(freshSession("big-host-other"));
      await other.commit([[conversation]], () => undefined);
    } finally {
      await host.close();
    }
  });
});

if (!PG_URL) it.skip(`bigint range: ${SKIP_REASON}`, () => undefined);
