import { Session, type ConversationId, type StorageWrite } from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

const C = 1 as ConversationId;
const conversation: StorageWrite = { type: "conversation", value: { id: C } };
const entry = (id: number): StorageWrite =>
  ({ type: "entry", value: { id, conversationId: C, kind: "note" } }) as StorageWrite;

async function count(session: string, table: string): Promise<number> {
  const r = await pool!.query<{ n: string }>(
    `SELECT count(*) AS n FROM durably.${table} WHERE session_key = $1`,
    [session],
  );
  return Number(r.rows[0]?.n);
}

describe.skipIf(!PG_URL)("PostgresStorage > single owner", () => {
  it("a second open of a live session fails with StorageLocked naming the owner, and changes nothing", async () => {
    const session = freshSession("owner");
    const first = await openTestStorage(session, { owner: "first" });
    try {
      await first.commit([[conversation, entry(2)]], () => undefined);
      await expect(openTestStorage(session, { owner: "second" })).rejects.toMatchObject({
        name: "StorageLocked",
        holder: "first",
        message: expect.stringContaining("first") as unknown,
      });
      await first.commit([[entry(3)]], () => undefined);
      expect(await count(session, "entries")).toBe(2);
    } finally {
      await first.close();
    }
  });

  it("close gives the lease up: the next open succeeds at once with a higher fencing token", async () => {
    const session = freshSession("owner");
    const first = await openTestStorage(session);
    await first.close();
    const second = await openTestStorage(session);
    await second.close();
    const r = await pool!.query<{ lease_token: string; lease_owner: string | null }>(
      "SELECT lease_token, lease_owner FROM durably.sessions WHERE session_key = $1",
      [session],
    );
    expect(r.rows[0]).toEqual({ lease_token: "2", lease_owner: null });
  });

  it("sessions are isolated: two owners write the same ids in one database without seeing each other", async () => {
    const a = await openTestStorage(freshSession("iso"));
    const b = await openTestStorage(freshSession("iso"));
    try {
      await a.commit([[conversation, entry(2)]], () => undefined);
      await b.commit(
        [
          [
            conversation,
            {
              ...entry(2),
              value: { ...(entry(2) as { value: object }).value, kind: "other" },
            } as StorageWrite,
          ],
        ],
        () => undefined,
      );
      expect((await a.entry(2 as never))?.entry.kind).toBe("note");
      expect((await b.entry(2 as never))?.entry.kind).toBe("other");
      expect((await a.scanEntries({ conversationId: C }, 10)).items).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("the fence inside each commit refuses a storage whose lease was taken over, and nothing of that commit is stored", async () => {
    const session = freshSession("fence");
    const storage = await openTestStorage(session, { leaseMs: 60_000 });
    const durable = await Session.open(storage);
    await storage.commit([[conversation]], () => undefined);
    // Another server took the session over (as after this one's lease expired).
    await pool!.query(
      "UPDATE durably.sessions SET lease_token = lease_token + 1, lease_owner = 'usurper' WHERE session_key = $1",
      [session],
    );
    const failure = await durable
      .commit((tx) => tx.appendEntry(C, { kind: "late" }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toMatchObject({ name: "SessionFailed", cause: { name: "StorageLocked" } });
    expect(await count(session, "entries")).toBe(0);
    await expect(storage.commit([[entry(9)]], () => undefined)).rejects.toMatchObject({
      name: "StorageLocked",
    });
    await durable.close().catch(() => undefined);
  });

  it("an expired lease is taken over even while its holder's connection is alive", async () => {
    const session = freshSession("expiry");
    // A long lease (no renewal during the test), expired in place as if its owner had stopped renewing.
    const first = await openTestStorage(session, { leaseMs: 60_000 });
    await pool!.query(
      "UPDATE durably.sessions SET lease_expires_at = now() - interval '1 second' WHERE session_key = $1",
      [session],
    );
    const second = await openTestStorage(session);
    try {
      await expect(first.commit([[conversation]], () => undefined)).rejects.toMatchObject({
        name: "StorageLocked",
      });
      await second.commit([[conversation]], () => undefined);
      expect(await count(session, "conversations")).toBe(1);
    } finally {
      await second.close();
      await first.close();
    }
  });
});

if (!PG_URL) it.skip(`single owner: ${SKIP_REASON}`, () => undefined);
