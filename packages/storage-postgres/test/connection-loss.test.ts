import { Session, type ConversationId } from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

/**
 * Ends the server side of every connection serving the session (what a
 * network cut or a failover does): its liveness connection and the pooled
 * ones running its commits, all named after the session.
 */
async function killOwnerConnection(session: string): Promise<number> {
  const r = await pool!.query<{ killed: boolean }>(
    "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1",
    [`durably ${session}`.slice(0, 63)],
  );
  return r.rows.filter((row) => row.killed).length;
}

const ENTRIES_PER_COMMIT = 40;

describe.skipIf(!PG_URL)("PostgresStorage > connection loss mid-commit", () => {
  it("a commit blocked inside its transaction when the connection dies fails the Session; reopening shows none of it", async () => {
    const session = freshSession("cut");
    const storage = await openTestStorage(session);
    const durable = await Session.open(storage);
    let conversationId = 0 as ConversationId;
    await durable.commit(async (tx) => {
      conversationId = (await tx.createConversation({ ownership: { kind: "ownerless" } })).id;
    });
    // Hold the session row so the next commit's fence waits inside its transaction.
    const blocker = await pool!.connect();
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM durably.sessions WHERE session_key = $1 FOR UPDATE", [
      session,
    ]);
    const pending = durable
      .commit((tx) => tx.appendEntry(conversationId, { kind: "cut" }))
      .then(
        () => "committed",
        (error: unknown) => error,
      );
    await new Promise((r) => setTimeout(r, 300));
    expect(await killOwnerConnection(session)).toBeGreaterThanOrEqual(2);
    await blocker.query("ROLLBACK");
    blocker.release();
    const failed = await pending;
    expect(failed).toMatchObject({ name: "SessionFailed" });
    // The commit in flight carries the storage's typed error, the driver's as its cause.
    const cause = (failed as Error).cause as Error;
    expect(cause).toMatchObject({ name: "StoragePoisoned" });
    expect(cause.message).toContain("a commit's outcome is unknown");
    expect(cause.cause).toMatchObject({ code: "57P01" });
    await expect(durable.commit(() => undefined)).rejects.toMatchObject({ name: "SessionFailed" });
    await durable.close().catch(() => undefined);

    // The dead connection released the liveness lock: reopening does not wait for the lease.
    const reopened = await openTestStorage(session);
    try {
      const page = await reopened.scanEntries({ conversationId }, 10);
      expect(page.items).toEqual([]);
    } finally {
      await reopened.close();
    }
  });

  it("connections cut at random moments mid-commit: after each, a reopen holds every acknowledged commit and each commit whole or not at all", async () => {
    const session = freshSession("cuts");
    let acknowledged = 0;
    let failed = 0;
    let conversationId = 0 as ConversationId;
    for (let round = 0; round < 12; round++) {
      const storage = await openTestStorage(session);
      const durable = await Session.open(storage);
      if (round === 0)
        await durable.commit(async (tx) => {
          conversationId = (await tx.createConversation({ ownership: { kind: "ownerless" } })).id;
        });
      const commits = Array.from({ length: 4 }, (_, i) =>
        durable
          .commit(async (tx) => {
            for (let n = 0; n < ENTRIES_PER_COMMIT; n++)
              await tx.appendEntry(conversationId, { kind: "bulk", data: { round, commit: i, n } });
          })
          .then(
            () => true,
            () => false,
          ),
      );
      // A cut somewhere between nothing sent and everything acknowledged.
      await new Promise((r) => setTimeout(r, (round * 7) % 25));
      await killOwnerConnection(session);
      const outcomes = await Promise.all(commits);
      acknowledged += outcomes.filter(Boolean).length;
      failed += outcomes.filter((ok) => !ok).length;
      await durable.close().catch(() => undefined);
      const ackedThisRound = outcomes.map((ok, i) => (ok ? i : -1)).filter((i) => i >= 0);

      const check = await openTestStorage(session);
      try {
        const byCommit = new Map<string, number>();
        let cursor;
        do {
          const page = await check.scanEntries({ conversationId, order: "ascending" }, 500, cursor);
          for (const e of page.items) {
            const d = e.data as { round: number; commit: number };
            const key = `${d.round}/${d.commit}`;
            byCommit.set(key, (byCommit.get(key) ?? 0) + 1);
          }
          cursor = page.next;
        } while (cursor);
        for (const count of byCommit.values()) expect(count).toBe(ENTRIES_PER_COMMIT);
        for (const i of ackedThisRound)
          expect(byCommit.get(`${round}/${i}`)).toBe(ENTRIES_PER_COMMIT);
      } finally {
        await check.close();
      }
    }
    // The cuts did land mid-flight in some rounds and after the commits in others.
    expect(failed).toBeGreaterThan(0);
    expect(acknowledged + failed).toBe(48);
  }, 120_000);
});

if (!PG_URL) it.skip(`connection loss: ${SKIP_REASON}`, () => undefined);
