import type { ConversationId, DocumentId, StorageWrite } from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost, openPostgresStorage } from "../src/index.js";
import { migrations } from "../src/schema.js";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";
import { createNote } from "./support/documents.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

const C = 1 as ConversationId;
const conversation = { type: "conversation", value: { id: C } } as StorageWrite;
const entry = (id: number): StorageWrite =>
  ({ type: "entry", value: { id, conversationId: C, kind: "note" } }) as StorageWrite;

function freshSchema(): string {
  return `t_${Math.random().toString(36).slice(2, 10)}`;
}

describe.skipIf(!PG_URL)("PostgresStorage > schema", () => {
  it("servers starting at once on an empty database migrate it once, without racing", async () => {
    const schema = freshSchema();
    try {
      const opened = await Promise.all(
        Array.from({ length: 4 }, () => openTestStorage(freshSession("race"), { schema })),
      );
      await Promise.all(opened.map((s) => s.commit([[conversation]], () => undefined)));
      await Promise.all(opened.map((s) => s.close()));
      const versions = await pool!.query<{ version: number }>(
        `SELECT version FROM ${schema}.migrations`,
      );
      expect(versions.rows.map((r) => r.version).sort()).toEqual([1, 2, 3, 4]);
    } finally {
      await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });

  it("a schema at version 3 (before fence_round) is migrated to 4 at open; sessions it held go on committing, in both round modes", async () => {
    const schema = freshSchema();
    const session = freshSession("v3");
    try {
      // The schema as the release before this one left it: migrations 1 to 3, one session committed.
      await pool!.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      for (const m of migrations(schema).filter((m) => m.version <= 3)) {
        await pool!.query(m.sql);
        await pool!.query(`INSERT INTO ${schema}.migrations (version) VALUES ($1)`, [m.version]);
      }
      await pool!.query(
        `INSERT INTO ${schema}.sessions (session_key, next_seq, high_water, lease_owner, lease_token, lease_expires_at) VALUES ($1, 5, 3000, NULL, 7, now())`,
        [session],
      );
      for (const parameterizedCommits of [false, true]) {
        const host = await openPostgresHost({
          connectionString: PG_URL,
          schema,
          parameterizedCommits,
        });
        try {
          const storage = await host.open(session);
          const seqs: number[] = [];
          await storage.commit(
            // The second pass: the conversation exists; an id past the mark moves it again.
            parameterizedCommits ? [[entry(3600)], [entry(5000)]] : [[conversation], [entry(3500)]],
            (_, seq) => void seqs.push(seq),
          );
          expect(seqs).toEqual(parameterizedCommits ? [7, 8] : [5, 6]);
        } finally {
          await host.close();
        }
      }
      const versions = await pool!.query<{ version: number }>(
        `SELECT version FROM ${schema}.migrations`,
      );
      expect(versions.rows.map((r) => r.version).sort()).toEqual([1, 2, 3, 4]);
      const row = await pool!.query<{ next_seq: string; high_water: string }>(
        `SELECT next_seq, high_water FROM ${schema}.sessions WHERE session_key = $1`,
        [session],
      );
      expect(row.rows[0]).toEqual({ next_seq: "9", high_water: String(5000 + 1024) });
    } finally {
      await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });

  it("a schema migrated by a newer release is refused with StorageVersionError, untouched", async () => {
    const schema = freshSchema();
    try {
      await (await openTestStorage(freshSession(), { schema })).close();
      await pool!.query(`INSERT INTO ${schema}.migrations (version) VALUES (99)`);
      await expect(openTestStorage(freshSession(), { schema })).rejects.toMatchObject({
        name: "StorageVersionError",
        message: expect.stringContaining("version 99") as unknown,
      });
    } finally {
      await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });

  it("a record column that is not JSON is StorageCorrupted naming the session, table and row", async () => {
    const session = freshSession("corrupt");
    const storage = await openTestStorage(session);
    try {
      await storage.commit([[conversation]], () => undefined);
      await pool!.query(
        "UPDATE durably.conversations SET record = '{\"id\": 1' WHERE session_key = $1",
        [session],
      );
      await expect(storage.conversation(C)).rejects.toMatchObject({
        name: "StorageCorrupted",
        location: { table: "conversations", key: `${session}/1` },
        message: expect.stringContaining(session) as unknown,
      });
    } finally {
      await storage.close();
    }
  });

  it("a revision whose content is not JSON is StorageCorrupted at its session/document/seq key, with the document id and seq", async () => {
    const session = freshSession("corrupt-rev");
    const storage = await openTestStorage(session);
    try {
      const D = 10 as DocumentId;
      await createNote(storage, D);
      const { rows } = await pool!.query<{ seq: string }>(
        "UPDATE durably.document_revisions SET content = '{\"n\": 1' WHERE session_key = $1 AND document_id = 10 RETURNING seq",
        [session],
      );
      const seq = Number(rows[0]!.seq);
      const error: unknown = await storage.document(D, "current").catch((e: unknown) => e);
      expect(error).toMatchObject({
        name: "StorageCorrupted",
        message: `session ${JSON.stringify(session)} document_revisions document_id 10 seq ${seq}: the content column is not JSON`,
      });
      expect((error as { location: unknown }).location).toEqual({
        table: "document_revisions",
        key: `${session}/10/${seq}`,
        documentId: 10,
        seq,
      });
    } finally {
      await storage.close();
    }
  });

  it("a seq beyond JavaScript's safe integers is StorageCorrupted, never rounded", async () => {
    const session = freshSession("bigint");
    const storage = await openTestStorage(session);
    try {
      await storage.commit([[conversation]], () => undefined);
      await pool!.query(
        "INSERT INTO durably.entries (session_key, id, conversation_id, commit_seq, is_head, record) VALUES ($1, 5, 1, 9007199254740993, false, '{}')",
        [session],
      );
      await expect(storage.entry(5 as never)).rejects.toMatchObject({
        name: "StorageCorrupted",
        message: expect.stringContaining("9007199254740993") as unknown,
      });
    } finally {
      await storage.close();
    }
  });

  it("strings PostgreSQL text cannot hold (U+0000, lone surrogates) round-trip exactly in keys and kinds", async () => {
    const storage = await openTestStorage(freshSession("text"));
    try {
      const scope = { kind: "session" } as const;
      const keys = ["a\u0000b", "x\ud800", "x\udbff", "quote ' and \\ backslash"];
      await storage.commit(
        [
          keys.map(
            (key, i) =>
              ({
                type: "document.create",
                record: { id: 10 + i, kind: `k\u0000${key}`, key, scope },
                content: { kind: "base", version: 1, value: { key } },
              }) as unknown as StorageWrite,
          ),
        ],
        () => undefined,
      );
      for (const [i, key] of keys.entries()) {
        const found = await storage.findDocument({ kind: `k\u0000${key}`, key, scope }, "current");
        expect(found?.id).toBe(10 + i);
        expect((await storage.document((10 + i) as never, "current"))?.value).toEqual({ key });
      }
    } finally {
      await storage.close();
    }
  });

  it("bad options are TypeErrors naming the option, before any connection is made", async () => {
    await expect(openPostgresStorage({ connectionString: PG_URL, session: "" })).rejects.toThrow(
      /session/,
    );
    await expect(
      openPostgresStorage({ connectionString: PG_URL, session: "s", schema: "Bad-Name; DROP" }),
    ).rejects.toThrow(/schema/);
    await expect(openPostgresStorage({ session: "s" })).rejects.toThrow(/pool or connectionString/);
    await expect(
      openPostgresStorage({ connectionString: PG_URL, session: "s", leaseMs: 5 }),
    ).rejects.toThrow(/leaseMs/);
  });
});

if (!PG_URL) it.skip(`schema: ${SKIP_REASON}`, () => undefined);
