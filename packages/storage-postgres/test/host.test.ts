/**
 * Sessions opened through one host: a bounded pool shared by all of them,
 * one liveness lock, and commits of different sessions grouped into shared
 * transactions, each session fenced and refused on its own.
 */
import type { ConversationId, StorageWrite } from "@durably/core";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost, openPostgresStorage, UnsupportedDatabase } from "../src/index.js";
import { freshSession, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

const C = 1 as ConversationId;
const conversation: StorageWrite = { type: "conversation", value: { id: C } };
const entry = (id: number, kind = "note"): StorageWrite =>
  ({ type: "entry", value: { id, conversationId: C, kind } }) as StorageWrite;

async function sessionRows(sessions: readonly string[], table: string): Promise<number> {
  const r = await pool!.query<{ n: string }>(
    `SELECT count(*) AS n FROM durably.${table} WHERE session_key = ANY($1)`,
    [sessions],
  );
  return Number(r.rows[0]?.n);
}

/** Samples how many connections carry `applicationName` until stopped; returns the most seen. */
function watchConnections(applicationName: string): () => Promise<number> {
  let most = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const r = await pool!.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1",
        [applicationName],
      );
      most = Math.max(most, Number(r.rows[0]?.n));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return most;
  };
}

describe.skipIf(!PG_URL)("PostgresHost > scale", () => {
  it("1,000 sessions through one host each commit, with never more than maxConnections connections open", async () => {
    const host = await openPostgresHost({ connectionString: PG_URL, maxConnections: 8 });
    const stop = watchConnections(host.applicationName!);
    const sessions = Array.from({ length: 1000 }, () => freshSession("thousand"));
    try {
      const storages = await Promise.all(sessions.map((s) => host.open(s)));
      expect(host.stats().sessions).toBe(1000);
      const outcomes = await Promise.all(
        storages.map((s) => s.commit([[conversation, entry(2)]], () => undefined)),
      );
      expect(outcomes.every((o) => o.stored === 1)).toBe(true);
      const stats = host.stats();
      expect(stats.calls).toBe(1000);
      // Grouped: far fewer transactions than commit calls.
      expect(stats.rounds).toBeLessThan(200);
    } finally {
      await host.close();
    }
    const most = await stop();
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
    expect(await sessionRows(sessions, "entries")).toBe(1000);
    // Closing gave every lease up.
    const held = await pool!.query<{ n: string }>(
      "SELECT count(*) AS n FROM durably.sessions WHERE session_key = ANY($1) AND lease_owner IS NOT NULL",
      [sessions],
    );
    expect(Number(held.rows[0]?.n)).toBe(0);
  }, 120_000);
});

/** A database of its own, so its transaction counter sees only this test's transactions. */
async function withDatabase<T>(use: (url: string) => Promise<T>): Promise<T> {
  const name = `durably_gc_${Math.random().toString(36).slice(2, 10)}`;
  await pool!.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  try {
    return await use(url.toString());
  } finally {
    await pool!.query(`DROP DATABASE ${name} WITH (FORCE)`);
  }
}

async function committedTransactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Counters of backends that exited are flushed; a fresh snapshot reads them.
    await client.query("SELECT pg_stat_clear_snapshot()");
    const r = await client.query<{ n: string }>(
      "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    return Number(r.rows[0]?.n);
  } finally {
    await client.end();
  }
}

for (const parameterizedCommits of [false, true])
  describe.skipIf(!PG_URL)(
    `PostgresHost > cross-session group commit${parameterizedCommits ? ", parameterized" : ""}`,
    () => {
      it("64 sessions committing at once, 20 commits each: the server counts far fewer transactions than commits", async () => {
        await withDatabase(async (url) => {
          const host = await openPostgresHost({
            connectionString: url,
            maxConnections: 8,
            parameterizedCommits,
          });
          const storages = await Promise.all(
            Array.from({ length: 64 }, () => host.open(freshSession("group"))),
          );
          await Promise.all(storages.map((s) => s.commit([[conversation]], () => undefined)));
          const before = host.stats();
          // Backends flush their counters when they go idle or exit: close the host to read them exactly.
          const COMMITS_PER_SESSION = 20;
          let id = 10;
          await Promise.all(
            storages.map(async (s) => {
              for (let i = 0; i < COMMITS_PER_SESSION; i++)
                await s.commit([[entry(++id)]], () => undefined);
            }),
          );
          const after = host.stats();
          await host.close();
          await new Promise((resolve) => setTimeout(resolve, 1500));
          const transactions = await committedTransactions(url);
          const commits = 64 * COMMITS_PER_SESSION;
          expect(after.calls - before.calls).toBe(commits);
          const rounds = after.rounds - before.rounds;
          expect(rounds).toBeLessThan(commits / 4);
          // Every transaction of the database, the host's opens, reads, renewals and migrations included.
          expect(transactions).toBeLessThan(commits / 2);
          console.log(
            `group commit: ${commits} commits of 64 sessions in ${rounds} rounds; the database committed ${transactions} transactions in all`,
          );
        });
      }, 120_000);

      it("a fenced session fails alone while its neighbours' commits in the same round land", async () => {
        const host = await openPostgresHost({
          connectionString: PG_URL,
          maxConnections: 4,
          parameterizedCommits,
        });
        try {
          const sessions = Array.from({ length: 8 }, () => freshSession("neighbour"));
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          await Promise.all(storages.map((s) => s.commit([[conversation]], () => undefined)));
          // Another owner took session 3 over (as after this host's lease on it expired).
          await pool!.query(
            "UPDATE durably.sessions SET lease_token = lease_token + 1, lease_owner = 'usurper' WHERE session_key = $1",
            [sessions[3]],
          );
          const before = host.stats();
          const results = await Promise.allSettled(
            storages.map((s) => s.commit([[entry(2)], [entry(3)]], () => undefined)),
          );
          const after = host.stats();
          expect(after.rounds - before.rounds).toBe(1);
          expect(after.replays - before.replays).toBe(1);
          results.forEach((r, i) => {
            if (i === 3)
              expect(r).toMatchObject({ status: "rejected", reason: { name: "StorageLocked" } });
            else expect(r).toEqual({ status: "fulfilled", value: { stored: 2 } });
          });
          expect(await sessionRows([sessions[3]!], "entries")).toBe(0);
          expect(await sessionRows(sessions, "entries")).toBe(14);
          // The fenced storage stays refused; its neighbours go on.
          await expect(storages[3]!.commit([[entry(9)]], () => undefined)).rejects.toMatchObject({
            name: "StorageLocked",
          });
          await storages[4]!.commit([[entry(9)]], () => undefined);
          expect(await sessionRows([sessions[4]!], "entries")).toBe(3);
        } finally {
          await host.close();
        }
      });

      it("one round of sessions committing different numbers of batches stores each session's seq and high-water mark in its own row", async () => {
        const host = await openPostgresHost({
          connectionString: PG_URL,
          maxConnections: 4,
          parameterizedCommits,
        });
        const sessions = Array.from({ length: 6 }, () => freshSession("counters"));
        try {
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          // Seq 1; entry 2 moves every high-water mark to 2 + 1024.
          await Promise.all(
            storages.map((s) => s.commit([[conversation, entry(2)]], () => undefined)),
          );
          const before = host.stats();
          // Session i commits i + 1 batches in ONE shared round; the odd ones write an id past
          // their mark (so their mark moves), the even ones stay below it (their mark stays).
          const seqs: number[][] = sessions.map(() => []);
          const outcomes = await Promise.all(
            storages.map((s, i) =>
              s.commit(
                Array.from({ length: i + 1 }, (_, b) => [
                  entry(i % 2 === 1 && b === i ? 5000 + i : 10 + b),
                ]),
                (index, seq) => void (seqs[i]![index] = seq),
              ),
            ),
          );
          const after = host.stats();
          expect(after.rounds - before.rounds).toBe(1);
          expect(after.calls - before.calls).toBe(6);
          expect(after.replays - before.replays).toBe(0);
          outcomes.forEach((o, i) => expect(o).toEqual({ stored: i + 1 }));
          seqs.forEach((s, i) => expect(s).toEqual(Array.from({ length: i + 1 }, (_, b) => 2 + b)));
          const rows = await pool!.query<{
            session_key: string;
            next_seq: string;
            high_water: string;
          }>(
            "SELECT session_key, next_seq, high_water FROM durably.sessions WHERE session_key = ANY($1)",
            [sessions],
          );
          const byKey = new Map(rows.rows.map((r) => [r.session_key, r]));
          sessions.forEach((key, i) => {
            const r = byKey.get(key)!;
            expect(Number(r.next_seq)).toBe(2 + i + 1);
            expect(Number(r.high_water)).toBe(i % 2 === 1 ? 5000 + i + 1024 : 2 + 1024);
          });
        } finally {
          await host.close();
        }
        // Reopened elsewhere, each session goes on from its own counters: the next seq, ids past its mark.
        const next = await openPostgresHost({ connectionString: PG_URL, parameterizedCommits });
        try {
          for (const [i, key] of sessions.entries()) {
            const storage = await next.open(key);
            expect(await storage.mintId()).toBeGreaterThan(i % 2 === 1 ? 5000 + i + 1024 : 1026);
            const seqs: number[] = [];
            await storage.commit([[entry(20)]], (_, seq) => void seqs.push(seq));
            expect(seqs).toEqual([2 + i + 1]);
          }
        } finally {
          await next.close();
        }
      });

      it("a session refused by a unique index stores its batches before the refused one; its neighbours' calls land whole", async () => {
        const host = await openPostgresHost({
          connectionString: PG_URL,
          maxConnections: 4,
          parameterizedCommits,
        });
        try {
          const sessions = Array.from({ length: 4 }, () => freshSession("refused"));
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          await Promise.all(
            storages.map((s) => s.commit([[conversation, entry(2)]], () => undefined)),
          );
          // Session 1's conversation gets entry 5 behind this storage's back, so its own entry 5 hits the primary key.
          await pool!.query(
            `INSERT INTO durably.entries (session_key, id, conversation_id, commit_seq, is_head, record)
         VALUES ($1, 5, 1, 99, false, '{"id":5,"conversationId":1,"kind":"intruder"}')`,
            [sessions[1]],
          );
          const results = await Promise.all(
            storages.map((s) => s.commit([[entry(4)], [entry(5)], [entry(6)]], () => undefined)),
          );
          results.forEach((r, i) => {
            if (i === 1) expect(r).toMatchObject({ stored: 1, refused: { batchIndex: 1 } });
            else expect(r).toEqual({ stored: 3 });
          });
          expect(await sessionRows([sessions[1]!], "entries")).toBe(3); // 2, 4 and the intruder's 5
          expect(await sessionRows(sessions, "entries")).toBe(3 + 3 * 4);
        } finally {
          await host.close();
        }
      });

      it("one renewal statement per period renews every session; a session taken over meanwhile fails alone", async () => {
        const host = await openPostgresHost({
          connectionString: PG_URL,
          leaseMs: 300,
          parameterizedCommits,
        });
        try {
          const sessions = Array.from({ length: 5 }, () => freshSession("renew"));
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          await pool!.query(
            "UPDATE durably.sessions SET lease_token = lease_token + 1, lease_owner = 'usurper' WHERE session_key = $1",
            [sessions[0]],
          );
          const renewals = host.stats().renewals;
          await new Promise((resolve) => setTimeout(resolve, 1000));
          const periods = host.stats().renewals - renewals;
          // About one per 100 ms (fewer on a loaded machine), for all five sessions together.
          expect(periods).toBeGreaterThanOrEqual(3);
          expect(periods).toBeLessThanOrEqual(12);
          await expect(
            storages[0]!.commit([[conversation]], () => undefined),
          ).rejects.toMatchObject({
            name: "StorageLocked",
            message: expect.stringContaining("taken over") as unknown,
          });
          for (const s of storages.slice(1)) await s.commit([[conversation]], () => undefined);
          const live = await pool!.query<{ n: string }>(
            "SELECT count(*) AS n FROM durably.sessions WHERE session_key = ANY($1) AND lease_expires_at > now() AND lease_owner <> 'usurper'",
            [sessions],
          );
          expect(Number(live.rows[0]?.n)).toBe(4);
        } finally {
          await host.close();
        }
      });
    },
  );

/** A pool recording the text of every query its clients send. */
class ScriptRecordingPool extends pg.Pool {
  readonly texts: string[] = [];
  readonly #patched = new WeakSet<pg.PoolClient>();
  override connect(...args: unknown[]): never {
    const connect = (...a: unknown[]) =>
      (super.connect as (...b: unknown[]) => unknown).apply(this, a);
    if (typeof args[0] === "function") return connect(args[0]) as never;
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      // A pooled client comes back on later checkouts: wrap its query once.
      if (this.#patched.has(client)) return client;
      this.#patched.add(client);
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as { query: unknown }).query = (...a: unknown[]) => {
        const first = a[0];
        this.texts.push(typeof first === "string" ? first : (first as { text: string }).text);
        return query(...a);
      };
      return client;
    }) as never;
  }
}

describe.skipIf(!PG_URL)("PostgresHost > the SQL of a round", () => {
  it("a round of 8 sessions sends one statement fencing all of them and storing their counters, sessions in key byte order", async () => {
    const recording = new ScriptRecordingPool({ connectionString: PG_URL, max: 4 });
    const host = await openPostgresHost({ pool: recording });
    try {
      // Keys whose byte order differs from many collations' order (case, punctuation).
      const base = freshSession("shape");
      const sessions = ["b", "B", "a-", "a_", "Z", "a", "ä", "_"].map((k) => `${base}/${k}`);
      const storages = await Promise.all(sessions.map((s) => host.open(s)));
      await Promise.all(storages.map((s) => s.commit([[conversation]], () => undefined)));
      recording.texts.length = 0;
      const before = host.stats();
      await Promise.all(storages.map((s) => s.commit([[entry(2)], [entry(3)]], () => undefined)));
      expect(host.stats().rounds - before.rounds).toBe(1);
      // Commit rounds (renewals run on the liveness connection too, a statement of their own).
      const rounds = recording.texts.filter(
        (t) => t.startsWith("BEGIN;") && t.includes("INSERT INTO durably.entries"),
      );
      expect(rounds).toHaveLength(1);
      const statements = rounds[0]!.split(";\n");
      // One statement fences every session and stores its counters; none per session.
      expect(statements.filter((t) => t.includes("durably.fence_round("))).toHaveLength(1);
      expect(statements.filter((t) => t.includes("durably.fence("))).toHaveLength(0);
      expect(statements.filter((t) => t.includes("durably.sessions"))).toHaveLength(0);
      expect(statements.filter((t) => t.startsWith("INSERT INTO durably.entries"))).toHaveLength(
        16,
      );
      // Its sessions, in the order it locks their rows: the keys sorted by UTF-8 bytes.
      const fence = statements.find((t) => t.includes("durably.fence_round("))!;
      const order = sessions
        .map((k) => ({ k, i: fence.indexOf(`'${k}'`) }))
        .sort((x, y) => x.i - y.i)
        .map((x) => x.k);
      expect(order).toEqual(
        [...sessions].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
      );
      expect(await sessionRows(sessions, "entries")).toBe(16);
    } finally {
      await host.close();
      await recording.end();
    }
  });
});

describe.skipIf(!PG_URL)("PostgresHost > owners of the previous release", () => {
  it("a session held by a per-session liveness lock (before hosts) stays held while that connection lives, and is taken over at once when it dies", async () => {
    const session = freshSession("legacy");
    const legacy = await pool!.connect();
    let released = false;
    try {
      // What a previous release's owner leaves: its own lock, lease_locked, no lease_host.
      await legacy.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [
        `durably:owner:durably:${session}`,
      ]);
      await pool!.query(
        `INSERT INTO durably.sessions (session_key, next_seq, high_water, lease_owner, lease_token, lease_locked, lease_expires_at)
         VALUES ($1, 1, 1, 'old-release', 1, TRUE, now() + interval '60 seconds')`,
        [session],
      );
      const host = await openPostgresHost({ connectionString: PG_URL, maxConnections: 2 });
      try {
        await expect(host.open(session)).rejects.toMatchObject({
          name: "StorageLocked",
          holder: "old-release",
        });
        legacy.release(true); // the old owner's process dies
        released = true;
        const started = performance.now();
        const storage = await host.open(session);
        expect(performance.now() - started).toBeLessThan(10_000);
        await storage.commit([[conversation]], () => undefined);
      } finally {
        await host.close();
      }
    } finally {
      if (!released) legacy.release(true);
    }
  });
});

describe.skipIf(!PG_URL)("PostgresHost > bad input", () => {
  it("maxConnections that is not an integer of at least 2 is a RangeError, and no connection is made", async () => {
    for (const maxConnections of [0, 1, -3, 2.5, Number.NaN, "8" as unknown as number])
      await expect(
        openPostgresHost({ connectionString: PG_URL, maxConnections }),
      ).rejects.toMatchObject({
        name: "RangeError",
        message: expect.stringContaining("maxConnections") as unknown,
      });
    await expect(openPostgresHost({ connectionString: PG_URL, leaseMs: 5 })).rejects.toThrow(
      RangeError,
    );
    await expect(openPostgresHost({})).rejects.toThrow(TypeError);
    await expect(openPostgresHost(null as never)).rejects.toThrow(TypeError);
    await expect(
      openPostgresHost({ connectionString: PG_URL, parameterizedCommits: "yes" as never }),
    ).rejects.toThrow(TypeError);
    await expect(
      openPostgresHost({ connectionString: PG_URL, schema: "Bad-Name" }),
    ).rejects.toThrow(TypeError);
  });

  it("a pool of the caller's that allows fewer than 2 connections is a RangeError naming it; the pool is not ended", async () => {
    const small = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      await expect(openPostgresHost({ pool: small })).rejects.toMatchObject({
        name: "RangeError",
        message: expect.stringContaining("the pool allows 1 connection;") as unknown,
      });
      await expect(
        openPostgresStorage({ pool: small, session: freshSession("small-pool") }),
      ).rejects.toThrow(RangeError);
      expect((await small.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
    } finally {
      await small.end();
    }
  });

  it("a database not encoded UTF8 is refused at open with UnsupportedDatabase naming it; no table is created there", async () => {
    const name = `durably_latin1_${process.pid}_${Date.now()}`;
    await pool!.query(
      `CREATE DATABASE ${name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
    );
    try {
      const url = new URL(PG_URL);
      url.pathname = `/${name}`;
      const refused = await openPostgresStorage({
        connectionString: url.toString(),
        session: "s",
      }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UnsupportedDatabase);
      expect(refused).toMatchObject({
        setting: "server_encoding",
        value: "LATIN1",
        message: expect.stringContaining(`database "${name}" is encoded LATIN1`) as unknown,
      });
      const other = new pg.Client({ connectionString: url.toString() });
      await other.connect();
      try {
        const schemas = await other.query(
          "SELECT 1 FROM information_schema.schemata WHERE schema_name = 'durably'",
        );
        expect(schemas.rowCount).toBe(0);
      } finally {
        await other.end();
      }
    } finally {
      await pool!.query(`DROP DATABASE ${name}`);
    }
  });

  it("a session key that is not a non-empty string is a TypeError; nothing is written", async () => {
    const host = await openPostgresHost({ connectionString: PG_URL, maxConnections: 2 });
    try {
      for (const key of ["", 42, null, undefined, "a\u0000b", "\ud800", "x".repeat(1001)])
        await expect(host.open(key as string)).rejects.toMatchObject({
          name: "TypeError",
          message: expect.stringContaining("PostgresHost.open: session must be") as unknown,
        });
      const r = await pool!.query<{ n: string }>(
        "SELECT count(*) AS n FROM durably.sessions WHERE session_key IN ('', '42', 'null', 'undefined')",
      );
      expect(Number(r.rows[0]?.n)).toBe(0);
      expect(host.stats().sessions).toBe(0);
    } finally {
      await host.close();
    }
  });

  it("opening a session the host already has open is StorageLocked naming the host; the open one goes on", async () => {
    const host = await openPostgresHost({
      connectionString: PG_URL,
      maxConnections: 2,
      owner: "host-a",
    });
    try {
      const session = freshSession("twice");
      const first = await host.open(session);
      // Also while the first open is still under way.
      const other = freshSession("twice");
      const racing = await Promise.allSettled([host.open(other), host.open(other)]);
      expect(racing.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      await expect(host.open(session)).rejects.toMatchObject({
        name: "StorageLocked",
        holder: "host-a",
        message: expect.stringContaining("already open in this host") as unknown,
      });
      await first.commit([[conversation]], () => undefined);
      const token = await pool!.query<{ lease_token: string }>(
        "SELECT lease_token FROM durably.sessions WHERE session_key = $1",
        [session],
      );
      expect(token.rows[0]?.lease_token).toBe("1");
    } finally {
      await host.close();
    }
  });

  it("storages are closed with their host: later calls and opens are StorageClosed, nothing written; a pool passed in is not ended", async () => {
    const shared = new pg.Pool({ connectionString: PG_URL, max: 3 });
    const host = await openPostgresHost({ pool: shared, maxConnections: 3 });
    const session = freshSession("closed");
    const storage = await host.open(session);
    await storage.commit([[conversation]], () => undefined);
    await host.close();
    await host.close(); // idempotent
    await expect(storage.commit([[entry(2)]], () => undefined)).rejects.toMatchObject({
      name: "StorageClosed",
    });
    await expect(storage.conversation(C)).rejects.toMatchObject({ name: "StorageClosed" });
    await expect(host.open(freshSession("closed"))).rejects.toMatchObject({
      name: "StorageClosed",
    });
    expect(await sessionRows([session], "entries")).toBe(0);
    // The application's pool still works, and the host left no connection checked out.
    expect((await shared.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
    expect(shared.totalCount - shared.idleCount).toBe(0);
    await shared.end();
  });
});

if (!PG_URL) it.skip(`PostgresHost: ${SKIP_REASON}`, () => undefined);
