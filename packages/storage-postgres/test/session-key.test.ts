import { randomUUID } from "node:crypto";
import {
  defineDoc,
  defineDocFamily,
  MAX_KEY_BYTES,
  MAX_KIND_BYTES,
  ROOT_CONVERSATION_ID as ROOT,
  Session,
} from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost, openPostgresStorage } from "../src/index.js";
import { TABLES } from "../src/schema-check.js";
import { checkSessionKey, MAX_SESSION_KEY_BYTES } from "../src/session-key.js";
import { openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

/** `fill` (its UTF-8 or JSON text `size` bytes) repeated, then ASCII up to exactly `bytes`. */
function filled(bytes: number, fill: string, size: number): string {
  const count = Math.floor(bytes / size);
  return fill.repeat(count) + "a".repeat(bytes - count * size);
}

/** A session key of exactly `bytes` UTF-8 bytes, mostly three-byte characters, unique per call. */
function sessionKey(bytes: number): string {
  const id = randomUUID(); // 36 ASCII bytes
  return `${id}${filled(bytes - id.length, "漢", 3)}`;
}

describe("checkSessionKey", () => {
  it("bounds a key by its UTF-8 bytes, not its UTF-16 units", () => {
    expect(MAX_SESSION_KEY_BYTES).toBe(1000);
    for (const [fill, size] of [
      ["a", 1],
      ["é", 2],
      ["漢", 3],
      ["😀", 4],
    ] as const) {
      const fits = filled(MAX_SESSION_KEY_BYTES, fill, size);
      expect(Buffer.byteLength(fits)).toBe(MAX_SESSION_KEY_BYTES);
      expect(checkSessionKey("open", fits)).toBe(fits);
      const longer = `${fill}${fits}`;
      expect(() => checkSessionKey("open", longer)).toThrow(TypeError);
      expect(() => checkSessionKey("open", longer)).toThrow(
        `open: session must be a non-empty, well-formed string of at most 1000 UTF-8 bytes without U+0000, got ${JSON.stringify(`${longer.slice(0, 60)}…`)} of ${MAX_SESSION_KEY_BYTES + size} bytes`,
      );
    }
    // 334 CJK characters: fewer than 1000 units, but 1002 bytes.
    expect(() => checkSessionKey("open", "漢".repeat(334))).toThrow(/of 1002 bytes/);
    expect(checkSessionKey("open", "漢".repeat(333))).toBe("漢".repeat(333));
  });

  it("still refuses what text cannot hold exactly, and what is not a non-empty string", () => {
    for (const key of ["", 42, null, undefined, "a\u0000b", "\ud800", "x\udfff"])
      expect(() => checkSessionKey("open", key)).toThrow(
        /^open: session must be a non-empty, well-formed string of at most 1000 UTF-8 bytes/,
      );
  });
});

const Notes = defineDoc<{ text: string }, "conversation">({
  kind: filled(MAX_KIND_BYTES - 2, "é", 2),
  version: 1,
  scope: "conversation",
  initial: () => ({ text: "" }),
});

const Pages = defineDocFamily<{ n: number }, "conversation", number>({
  kind: `${filled(MAX_KIND_BYTES - 2 - 12, "漢", 3)}\u0001\u0001`, // escapes stored as \u0001
  version: 1,
  scope: "conversation",
  initial: (n) => ({ n }),
});

const Holder = { name: filled(MAX_KIND_BYTES - 2, "😀", 4), version: 1, initial: () => 0 };

/** A document key and request id of exactly MAX_KEY_BYTES of JSON text, mixing multibyte characters and escapes. */
const KEY = `${filled(MAX_KEY_BYTES - 2 - 18, "漢", 3)}"\\\u0001\n\ud800`; // escapes: 2 + 2 + 6 + 2 + 6 = 18
const REQUEST = `${filled(MAX_KEY_BYTES - 2 - 12, "😀", 4)}\u0000\u001f`;

describe.skipIf(!PG_URL)(
  "PostgresStorage > the largest session key with the largest indexed strings",
  () => {
    const pool = PG_URL ? testPool() : undefined;
    afterAll(async () => pool?.end());

    it("the limits are exact (JSON text, UTF-8)", () => {
      expect(Buffer.byteLength(JSON.stringify(Notes.kind))).toBe(MAX_KIND_BYTES);
      expect(Buffer.byteLength(JSON.stringify(Pages.kind))).toBe(MAX_KIND_BYTES);
      expect(Buffer.byteLength(JSON.stringify(Holder.name))).toBe(MAX_KIND_BYTES);
      expect(Buffer.byteLength(JSON.stringify(KEY))).toBe(MAX_KEY_BYTES);
      expect(Buffer.byteLength(JSON.stringify(REQUEST))).toBe(MAX_KEY_BYTES);
    });

    it("a session key of 1000 UTF-8 bytes commits a document, a task and a submission at the limits, and reads them back after a reopen", async () => {
      const session = sessionKey(MAX_SESSION_KEY_BYTES);
      expect(Buffer.byteLength(session)).toBe(MAX_SESSION_KEY_BYTES);
      const storage = await openTestStorage(session);
      let opened = await Session.open(storage);
      const { taskId, submissionId } = await opened.commit(async (tx) => {
        (await tx.doc(Notes, ROOT)).text = "single";
        (await tx.doc(Pages, ROOT, KEY, 1)).n = 2;
        const taskId = await tx.createTask(Holder, null, {
          ownership: { kind: "ownerless" },
          conversationId: ROOT,
        });
        const submission = await tx.createSubmission(ROOT, {
          type: "write",
          content: "c",
          requestId: REQUEST,
        });
        return { taskId, submissionId: submission.id };
      });
      // A second commit updates the rows (new index entries in PostgreSQL).
      await opened.commit(async (tx) => {
        (await tx.doc(Pages, ROOT, KEY, 1)).n = 3;
        await tx.retireDoc(Notes, ROOT);
      });
      expect(opened.failed).toBeUndefined();
      await opened.close();
      await storage.close();

      const again = await openTestStorage(session);
      opened = await Session.open(again);
      try {
        expect(await opened.snapshot(Pages, ROOT, KEY)).toEqual({ n: 3 });
        expect(await opened.snapshot(Notes, ROOT)).toBeUndefined();
        expect((await opened.read.task(taskId))?.kind).toBe(Holder.name);
        expect((await opened.read.submissionByRequest(ROOT, REQUEST))?.id).toBe(submissionId);
        // The retired address takes a new incarnation (the unique live-address index).
        await opened.commit(async (tx) => {
          (await tx.doc(Notes, ROOT)).text = "again";
        });
        expect(await opened.snapshot(Notes, ROOT)).toEqual({ text: "again" });
        const rows = await pool!.query<{ n: string }>(
          "SELECT count(*) AS n FROM durably.documents WHERE session_key = $1",
          [session],
        );
        expect(Number(rows.rows[0]?.n)).toBe(3);
      } finally {
        await opened.close();
        await again.close();
      }
    });

    it("a session renamed in SQL (the README's way to keep one stored under a key now refused) opens under its new key with everything", async () => {
      const before = `old-${randomUUID()}`;
      const after = `new-${randomUUID()}`;
      const storage = await openTestStorage(before);
      let opened = await Session.open(storage);
      await opened.commit(async (tx) => {
        (await tx.doc(Pages, ROOT, KEY, 1)).n = 7;
        await tx.createSubmission(ROOT, { type: "write", content: "c", requestId: REQUEST });
      });
      await opened.close();
      await storage.close();
      // Every table with a session_key column, in one transaction, with no host holding the session.
      const tables = Object.keys(TABLES).filter((t) => TABLES[t]?.includes("session_key"));
      expect(tables).toHaveLength(7);
      const client = await pool!.connect();
      try {
        await client.query("BEGIN");
        for (const table of tables)
          await client.query(
            `UPDATE durably.${table} SET session_key = $1 WHERE session_key = $2`,
            [after, before],
          );
        await client.query("COMMIT");
      } finally {
        client.release();
      }
      const renamed = await openTestStorage(after);
      opened = await Session.open(renamed);
      try {
        expect(await opened.snapshot(Pages, ROOT, KEY)).toEqual({ n: 7 });
        expect(await opened.read.submissionByRequest(ROOT, REQUEST)).toBeDefined();
        await opened.commit(async (tx) => {
          (await tx.doc(Pages, ROOT, KEY, 1)).n = 8;
        });
        expect(await opened.snapshot(Pages, ROOT, KEY)).toEqual({ n: 8 });
      } finally {
        await opened.close();
        await renamed.close();
      }
    });

    it("a session key of 1001 UTF-8 bytes (fewer than 1000 characters) is a TypeError at open and on a host; nothing is written", async () => {
      const session = sessionKey(MAX_SESSION_KEY_BYTES + 1);
      expect(session.length).toBeLessThan(MAX_SESSION_KEY_BYTES);
      await expect(
        openPostgresStorage({ connectionString: PG_URL, session }),
      ).rejects.toMatchObject({
        name: "TypeError",
        message: expect.stringContaining(
          `openPostgresStorage: session must be a non-empty, well-formed string of at most 1000 UTF-8 bytes`,
        ) as unknown,
      });
      const host = await openPostgresHost({ connectionString: PG_URL, maxConnections: 2 });
      try {
        await expect(host.open(session)).rejects.toMatchObject({
          name: "TypeError",
          message: expect.stringContaining("of 1001 bytes") as unknown,
        });
        // The largest key opens on a host too.
        const largest = sessionKey(MAX_SESSION_KEY_BYTES);
        const storage = await host.open(largest);
        const opened = await Session.open(storage);
        await opened.commit(async (tx) => {
          (await tx.doc(Pages, ROOT, KEY, 1)).n = 9;
        });
        await opened.close();
        await storage.close();
      } finally {
        await host.close();
      }
      const rows = await pool!.query<{ n: string }>(
        "SELECT count(*) AS n FROM durably.sessions WHERE session_key = $1",
        [session],
      );
      expect(Number(rows.rows[0]?.n)).toBe(0);
    });
  },
);

if (!PG_URL) it.skip(`session keys on PostgreSQL: ${SKIP_REASON}`, () => undefined);
