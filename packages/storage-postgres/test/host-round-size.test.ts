/**
 * A host's commit rounds are bounded by size as well as by count: a call
 * that would take a round's text past the bound goes into the next round
 * (a call alone always goes), and a call whose part of a round cannot be
 * built fails alone, before anything is sent, without poisoning its session.
 */
import type { ConversationId, StorageWrite } from "@durably/core";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { CommitWriter } from "../src/commit-writer.js";
import { PostgresHost } from "../src/host.js";
import { freshSession, PG_URL, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());
afterEach(() => void vi.restoreAllMocks());

const C = 1 as ConversationId;
const conversation: StorageWrite = { type: "conversation", value: { id: C } };
const entry = (id: number, data: string): StorageWrite =>
  ({ type: "entry", value: { id, conversationId: C, kind: "note", data } }) as StorageWrite;

/**
 * Quotes, backslashes and multibyte characters (SQL and JSON escape them,
 * UTF-8 counts them wide): 16 bytes of a call's text per 7 characters.
 */
const text = (chars: number, seed: number) => `${seed}:${"é'\"\\😀x".repeat(Math.ceil(chars / 7))}`;

/** A pool recording the UTF-8 size of every commit round it is sent (the query, or its jsonb argument). */
class RoundRecordingPool extends pg.Pool {
  readonly rounds: number[] = [];
  readonly #patched = new WeakSet<pg.PoolClient>();
  override connect(...args: unknown[]): never {
    const connect = (...a: unknown[]) =>
      (super.connect as (...b: unknown[]) => unknown).apply(this, a);
    if (typeof args[0] === "function") return connect(args[0]) as never;
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      if (this.#patched.has(client)) return client;
      this.#patched.add(client);
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as { query: unknown }).query = (...a: unknown[]) => {
        const first = a[0];
        const sql = typeof first === "string" ? first : (first as { text: string }).text;
        const values = (typeof first === "string" ? a[1] : undefined) as unknown[] | undefined;
        if (sql.startsWith("BEGIN;") && sql.includes("fence_round("))
          this.rounds.push(Buffer.byteLength(sql));
        else if (sql.includes(".commit_calls(") && typeof values?.[0] === "string")
          this.rounds.push(Buffer.byteLength(values[0]));
        return query(...a);
      };
      return client;
    }) as never;
  }
}

async function entryData(sessions: readonly string[]): Promise<Map<string, string[]>> {
  const r = await pool!.query<{ session_key: string; record: string }>(
    "SELECT session_key, record FROM durably.entries WHERE session_key = ANY($1) ORDER BY session_key, id",
    [sessions],
  );
  const found = new Map<string, string[]>();
  for (const row of r.rows) {
    const list = found.get(row.session_key) ?? [];
    list.push((JSON.parse(row.record) as { data: string }).data);
    found.set(row.session_key, list);
  }
  return found;
}

for (const parameterizedCommits of [false, true])
  describe.skipIf(!PG_URL)(
    `PostgresHost > round size${parameterizedCommits ? ", parameterized" : ""}`,
    () => {
      it("calls whose text together exceeds the bound are split over several rounds, and every call is stored", async () => {
        const BOUND = 64 * 1024;
        const recording = new RoundRecordingPool({ connectionString: PG_URL, max: 3 });
        recording.on("error", () => undefined);
        const host = await PostgresHost.start(
          { pool: recording, maxConnections: 3, parameterizedCommits },
          { maxRoundBytes: BOUND },
        );
        const sessions = Array.from({ length: 12 }, () => freshSession("round-size"));
        try {
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          await Promise.all(storages.map((s) => s.commit([[conversation]], () => undefined)));
          recording.rounds.length = 0;
          const before = host.stats();
          // About 20 KiB of text per call: three fit under the bound, not four. Session 5's
          // call is larger than the bound by itself: it goes in a round of its own.
          const datas = sessions.map((_, i) => text(i === 5 ? 40_000 : 9_000, i));
          const outcomes = await Promise.all(
            storages.map((s, i) => s.commit([[entry(2, datas[i]!)]], () => undefined)),
          );
          const after = host.stats();
          expect(outcomes).toEqual(sessions.map(() => ({ stored: 1 })));
          expect(after.calls - before.calls).toBe(12);
          expect(after.replays - before.replays).toBe(0);
          const rounds = after.rounds - before.rounds;
          expect(recording.rounds).toHaveLength(rounds);
          // Split: 11 calls of about 20 KiB, 3 a round at most, and one of about 90 KiB alone.
          expect(rounds).toBeGreaterThanOrEqual(5);
          expect(rounds).toBeLessThan(12);
          // Every round of several calls within the bound (plus its fixed text: BEGIN, COMMIT,
          // the fence statement's name); only the oversized call's round is past it.
          const over = recording.rounds.filter((bytes) => bytes > BOUND + 1024);
          expect(over).toHaveLength(1);
          expect(over[0]).toBeGreaterThan(BOUND);
          const stored = await entryData(sessions);
          sessions.forEach((s, i) => expect(stored.get(s)).toEqual([datas[i]]));
        } finally {
          await host.close();
          await recording.end();
        }
      });

      it("the same calls go in one round under the default bound", async () => {
        const host = await PostgresHost.start({
          connectionString: PG_URL,
          maxConnections: 3,
          parameterizedCommits,
        });
        const sessions = Array.from({ length: 12 }, () => freshSession("round-size"));
        try {
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          await Promise.all(storages.map((s) => s.commit([[conversation]], () => undefined)));
          const before = host.stats();
          const datas = sessions.map((_, i) => text(i === 5 ? 40_000 : 9_000, i));
          await Promise.all(
            storages.map((s, i) => s.commit([[entry(2, datas[i]!)]], () => undefined)),
          );
          expect(host.stats().rounds - before.rounds).toBe(1);
          const stored = await entryData(sessions);
          sessions.forEach((s, i) => expect(stored.get(s)).toEqual([datas[i]]));
        } finally {
          await host.close();
        }
      });

      it("a call whose part of the round cannot be built fails alone before anything is sent, and its session is not poisoned", async () => {
        const host = await PostgresHost.start({
          connectionString: PG_URL,
          maxConnections: 3,
          parameterizedCommits,
        });
        const sessions = Array.from({ length: 4 }, () => freshSession("round-build"));
        const victim = sessions[2]!;
        try {
          const storages = await Promise.all(sessions.map((s) => host.open(s)));
          await Promise.all(storages.map((s) => s.commit([[conversation]], () => undefined)));
          // What building a too-large string throws, for the victim's call only.
          const method = parameterizedCommits ? "call" : "statements";
          const build = Reflect.get(CommitWriter.prototype, method) as (...a: unknown[]) => unknown;
          vi.spyOn(CommitWriter.prototype, method).mockImplementation(function (
            this: CommitWriter,
            ...a: unknown[]
          ) {
            if (this.session === victim) throw new RangeError("Invalid string length");
            return build.apply(this, a) as never;
          });
          const before = host.stats();
          const results = await Promise.allSettled(
            storages.map((s) => s.commit([[entry(2, "first")]], () => undefined)),
          );
          const after = host.stats();
          results.forEach((r, i) => {
            if (sessions[i] === victim)
              expect(r).toMatchObject({
                status: "rejected",
                reason: { name: "RangeError", message: "Invalid string length" },
              });
            else expect(r).toEqual({ status: "fulfilled", value: { stored: 1 } });
          });
          // The neighbours' round went without it.
          expect(after.calls - before.calls).toBe(3);
          expect(after.replays - before.replays).toBe(0);
          vi.restoreAllMocks();
          // Nothing of it was stored, and the session goes on: the same call again is stored.
          expect((await entryData([victim])).get(victim)).toBeUndefined();
          const victimStorage = storages[2]!;
          await expect(
            victimStorage.commit([[entry(2, "again")]], () => undefined),
          ).resolves.toEqual({ stored: 1 });
          await expect(
            victimStorage.commit([[entry(3, "and on")]], () => undefined),
          ).resolves.toEqual({ stored: 1 });
          expect((await entryData([victim])).get(victim)).toEqual(["again", "and on"]);
          const row = await pool!.query<{ next_seq: string }>(
            "SELECT next_seq FROM durably.sessions WHERE session_key = $1",
            [victim],
          );
          // Seq 1 the conversation, 2 and 3 the two entries: the failed call took no seq.
          expect(Number(row.rows[0]?.next_seq)).toBe(4);
        } finally {
          await host.close();
        }
      });
    },
  );
