/**
 * Failover between hosts in different processes. A SIGKILLed host's
 * liveness connection closes with it, so another host opens its sessions at
 * once (no lease wait) and finds every acknowledged commit exactly once. A
 * SIGSTOPped host keeps its lock and is waited out until its leases expire;
 * resumed, it is fenced: none of its later commits lands.
 */
import { Session } from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost } from "../src/index.js";
import { startHostChild, type Message } from "./support/host-child.js";
import { freshSession, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

/** Every `n` stored per session index (kind "child"), in the order of `sessions`. */
async function storedChildCommits(sessions: readonly string[]): Promise<Map<string, number>> {
  const r = await pool!.query<{ session_key: string; n: string }>(
    `SELECT session_key, record::json->'data'->>'n' AS n FROM durably.entries
      WHERE session_key = ANY($1) AND record::json->>'kind' = 'child'`,
    [sessions],
  );
  const counts = new Map<string, number>();
  for (const row of r.rows) {
    const key = `${sessions.indexOf(row.session_key)}/${row.n}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe.skipIf(!PG_URL)("PostgresHost > failover", () => {
  it("a SIGKILLed host's sessions are opened by another host at once; every acknowledged commit is there exactly once", async () => {
    const LEASE_MS = 30_000;
    const sessions = Array.from({ length: 24 }, () => freshSession("killed-host"));
    const { child, next, acks } = startHostChild({
      HOST_SESSIONS: sessions.join(","),
      HOST_LEASE_MS: String(LEASE_MS),
      HOST_MODE: "stream",
    });
    try {
      expect(await next()).toMatchObject({ opened: true });
      expect(await next()).toMatchObject({ ready: true });
      while (acks.size < 200) await new Promise((resolve) => setTimeout(resolve, 10));
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      const acknowledged = [...acks];

      const started = performance.now();
      const host = await openPostgresHost({ connectionString: PG_URL, owner: "successor" });
      try {
        const storages = await Promise.all(sessions.map((s) => host.open(s)));
        const tookOver = performance.now() - started;
        console.log(
          `SIGKILLed host: ${sessions.length} sessions taken over in ${Math.round(tookOver)} ms (lease ${LEASE_MS} ms), ${acknowledged.length} acknowledged commits`,
        );
        expect(tookOver).toBeLessThan(LEASE_MS / 3);
        // The successor writes at once.
        for (const storage of storages.slice(0, 3)) {
          const durable = await Session.open(storage);
          const [conversation] = (await storage.scanConversations({}, 1)).items;
          await durable.commit((tx) =>
            tx.appendEntry(conversation!.id, { kind: "successor", data: {} }),
          );
        }
      } finally {
        await host.close();
      }
      const stored = await storedChildCommits(sessions);
      for (const key of acknowledged) expect(stored.get(key), key).toBe(1);
      // Nothing is stored twice, acknowledged or not.
      for (const [key, count] of stored) expect(count, key).toBe(1);
      const tokens = await pool!.query<{ lease_token: string }>(
        "SELECT lease_token FROM durably.sessions WHERE session_key = ANY($1)",
        [sessions],
      );
      expect(tokens.rows.map((r) => r.lease_token)).toEqual(sessions.map(() => "2"));
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);

  it("a SIGSTOPped host is waited out until its leases expire, then fenced: after SIGCONT none of its commits lands", async () => {
    const LEASE_MS = 5_000;
    const sessions = Array.from({ length: 10 }, () => freshSession("paused-host"));
    const { child, next } = startHostChild({
      HOST_SESSIONS: sessions.join(","),
      HOST_LEASE_MS: String(LEASE_MS),
    });
    try {
      expect(await next()).toMatchObject({ opened: true });
      expect(await next()).toMatchObject({ ready: true });
      child.kill("SIGSTOP");
      const stoppedAt = performance.now();
      const host = await openPostgresHost({ connectionString: PG_URL, owner: "successor" });
      try {
        // Its leases are live and its liveness connection open: not taken over yet.
        await expect(host.open(sessions[0]!)).rejects.toMatchObject({
          name: "StorageLocked",
          holder: "child-host",
        });
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, LEASE_MS + 500 - (performance.now() - stoppedAt))),
        );
        const storages = await Promise.all(sessions.map((s) => host.open(s)));
        for (const storage of storages) {
          const durable = await Session.open(storage);
          const conversation = (await storage.scanConversations({}, 1)).items[0]!;
          await durable.commit((tx) =>
            tx.appendEntry(conversation.id, { kind: "successor", data: {} }),
          );
        }

        child.kill("SIGCONT");
        child.stdin!.write("commit\n");
        const refused = (await next()) as { results: Message[] };
        expect(refused.results).toHaveLength(sessions.length);
        for (const result of refused.results)
          expect(result).toMatchObject({
            result: "failed",
            name: "SessionFailed",
            cause: "StorageLocked",
          });
        const stored = await storedChildCommits(sessions);
        // Only each session's first commit (n = 0, before the pause) is the child's.
        expect([...stored.keys()].sort()).toEqual(sessions.map((_, i) => `${i}/0`).sort());
        const successor = await pool!.query<{ n: string }>(
          "SELECT count(*) AS n FROM durably.entries WHERE session_key = ANY($1) AND record::json->>'kind' = 'successor'",
          [sessions],
        );
        expect(Number(successor.rows[0]?.n)).toBe(sessions.length);
      } finally {
        await host.close();
      }
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);
});

if (!PG_URL) it.skip(`PostgresHost failover: ${SKIP_REASON}`, () => undefined);
