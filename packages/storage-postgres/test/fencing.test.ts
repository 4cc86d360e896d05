import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { Session, type ConversationId } from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const LEASE_MS = 1000;

/** The child's stdout as a queue of JSON messages. */
function messages(child: ChildProcess): () => Promise<Record<string, unknown>> {
  const queue: Record<string, unknown>[] = [];
  const waiters: ((m: Record<string, unknown>) => void)[] = [];
  const lines = createInterface({ input: child.stdout! });
  lines.on("line", (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  return () => {
    const next = queue.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("owner child said nothing for 20 s")),
        20_000,
      );
      waiters.push((m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
  };
}

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

describe.skipIf(!PG_URL)("PostgresStorage > fencing", () => {
  it("a paused owner (SIGSTOP) past its lease is taken over; resumed, its commit is refused and its Session fails; no write interleaves", async () => {
    const session = freshSession("fencing");
    const child = spawn(
      process.execPath,
      [
        "--conditions=@durably/source",
        "--import",
        "tsx",
        new URL("./fencing/owner-child.ts", import.meta.url).pathname,
      ],
      {
        env: { ...process.env, FENCING_SESSION: session, FENCING_LEASE_MS: String(LEASE_MS) },
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    const next = messages(child);
    try {
      const ready = await next();
      expect(ready.ready).toBe(true);
      const conversationId = ready.conversationId as ConversationId;

      // While the first owner runs, its lease is live: a second open fails and changes nothing.
      await expect(openTestStorage(session, { owner: "second-owner" })).rejects.toMatchObject({
        name: "StorageLocked",
      });

      child.kill("SIGSTOP");
      // Paused past its lease (its connection, and its liveness lock, stay open).
      await new Promise((r) => setTimeout(r, LEASE_MS * 2.5));
      const second = await openTestStorage(session, { owner: "second-owner", leaseMs: 30_000 });
      const durable = await Session.open(second);
      await durable.commit((tx) => tx.appendEntry(conversationId, { kind: "second-owner" }));

      child.kill("SIGCONT");
      child.stdin.write("commit\n");
      const refused = await next();
      expect(refused).toMatchObject({
        result: "failed",
        name: "SessionFailed",
        cause: { name: "StorageLocked" },
      });
      // Its Session stays failed.
      child.stdin.write("commit\n");
      expect(await next()).toMatchObject({ result: "failed", name: "SessionFailed" });

      // The new owner goes on writing.
      await durable.commit((tx) => tx.appendEntry(conversationId, { kind: "second-owner" }));
      await durable.close();

      const rows = await pool!.query<{ kind: string; commit_seq: string }>(
        "SELECT record::json->>'kind' AS kind, commit_seq FROM durably.entries WHERE session_key = $1 ORDER BY commit_seq",
        [session],
      );
      expect(rows.rows.map((r) => r.kind)).toEqual(["first-owner", "second-owner", "second-owner"]);
      const lease = await pool!.query<{ lease_token: string }>(
        "SELECT lease_token FROM durably.sessions WHERE session_key = $1",
        [session],
      );
      expect(Number(lease.rows[0]?.lease_token)).toBe(2);
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);
});

if (!PG_URL) it.skip(`fencing: ${SKIP_REASON}`, () => undefined);
