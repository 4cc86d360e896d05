/**
 * A SIGKILLed owner whose server backend is slow to notice: the kernel closes
 * the dead process's socket at once, but its PostgreSQL backend releases the
 * liveness lock only when it is next scheduled. On a loaded server that is a
 * moment later; the next open must wait that moment out rather than report
 * the session as owned for the rest of the dead owner's lease.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const LEASE_MS = 30_000;
const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

/** The server pid of the connection holding the liveness lock of the host that holds the session. */
async function lockHolderBackend(session: string): Promise<number> {
  const r = await pool!.query<{ pid: number }>(
    `SELECT l.pid FROM durably.sessions s, pg_locks l
      WHERE s.session_key = $1 AND l.locktype = 'advisory' AND l.granted
        AND l.classid = ((hashtextextended('durably:host:durably:' || s.lease_host, 0) >> 32) & 4294967295)::oid
        AND l.objid = (hashtextextended('durably:host:durably:' || s.lease_host, 0) & 4294967295)::oid`,
    [session],
  );
  const pid = r.rows[0]?.pid;
  if (pid === undefined) throw new Error(`no backend holds the liveness lock of ${session}`);
  return pid;
}

describe.skipIf(!PG_URL)("PostgresStorage > dead owner", () => {
  it("a SIGKILLed owner whose server backend exits a moment late is taken over at once, not after its lease", async () => {
    const session = freshSession("dead-owner");
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
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve, reject) => {
      lines.on("line", (line) => {
        if (line.includes('"ready"')) resolve();
      });
      child.once("exit", (code) => reject(new Error(`owner child exited early (${code})`)));
    });
    const backend = await lockHolderBackend(session);
    // The backend cannot run (so cannot notice the closed socket) until SIGCONT.
    process.kill(backend, "SIGSTOP");
    try {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      setTimeout(() => process.kill(backend, "SIGCONT"), 400);
      const started = Date.now();
      const storage = await openTestStorage(session, { owner: "second" });
      const waited = Date.now() - started;
      await storage.close();
      expect(waited).toBeLessThan(LEASE_MS / 2);
    } finally {
      try {
        process.kill(backend, "SIGCONT");
      } catch {
        // already gone
      }
    }
    const r = await pool!.query<{ lease_token: string }>(
      "SELECT lease_token FROM durably.sessions WHERE session_key = $1",
      [session],
    );
    expect(r.rows[0]?.lease_token).toBe("2");
  });
});

if (!PG_URL) it.skip(`dead owner: ${SKIP_REASON}`, () => undefined);
