/**
 * Commits per second on SQLite: one entry append plus one document delta per
 * commit, next to raw better-sqlite3 writing the same two rows with one
 * transaction per commit, measured in the same run on the same machine.
 *
 *   pnpm --filter @durably/storage-sqlite bench   (BENCH_SECONDS=2 per case, BENCH_ROUNDS=5 interleaved rounds)
 *
 * Measured through `storage.commit` directly: the Session kernel is not
 * available yet, so "64 writers" is measured as what its group commit sends
 * (64 batches in one call) and as 64 uncoordinated callers (one batch per call).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { ConversationId, DocumentId, EntryId, StorageWrite } from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const WRITERS = 64;
const C = 1 as ConversationId;
const DOC = 2 as DocumentId;
const dir = mkdtempSync(join(tmpdir(), "durably-sqlite-bench-"));
let files = 0;
const nextPath = () => join(dir, `bench-${files++}.sqlite`);

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Result {
  name: string;
  commits: number;
  seconds: number;
  perSecond: number;
}

/** One benchmark case: `step` performs `commitsPerStep` commits. */
interface Case {
  name: string;
  commitsPerStep: number;
  step: () => Promise<void> | void;
  close: () => Promise<void> | void;
}

/** Runs `step` repeatedly for `seconds` after a short warm-up. */
async function measure(c: Case, seconds: number): Promise<Result> {
  const warmUntil = performance.now() + 100;
  while (performance.now() < warmUntil) await c.step();
  let commits = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    await c.step();
    commits += c.commitsPerStep;
  }
  const elapsed = (performance.now() - start) / 1000;
  return { name: c.name, commits, seconds: elapsed, perSecond: commits / elapsed };
}

function stepWrites(n: number, entryId: number): StorageWrite[] {
  return [
    {
      type: "entry",
      value: {
        id: entryId as EntryId,
        conversationId: C,
        kind: "bench.step",
        data: { n, text: `step ${n}` },
      },
    },
    {
      type: "document.change",
      id: DOC,
      content: { kind: "delta", version: 1, ops: [["s", ["count"], n]] },
    },
  ];
}

async function openBenchStorage(): Promise<SqliteStorage> {
  const storage = await openSqliteStorage(nextPath());
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: C } },
        {
          type: "document.create",
          record: { id: DOC, kind: "bench.counter", scope: { kind: "session" } },
          content: { kind: "base", version: 1, value: { count: 0 } },
        },
      ],
    ],
    () => undefined,
  );
  return storage;
}

/** Raw better-sqlite3: the same entry and revision rows, the same pragmas, prepared statements, one transaction per commit. */
function rawBaseline(): Case {
  const db = new Database(nextPath());
  db.pragma("locking_mode = EXCLUSIVE");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`
    CREATE TABLE entries (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, commit_seq INTEGER NOT NULL, record TEXT NOT NULL);
    CREATE INDEX entries_by_conversation ON entries (conversation_id, id);
    CREATE TABLE document_revisions (document_id INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, content TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (document_id, seq)) WITHOUT ROWID;
  `);
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const insertEntry = db.prepare(
    "INSERT INTO entries (id, conversation_id, commit_seq, record) VALUES (?, ?, ?, ?)",
  );
  const insertRevision = db.prepare(
    "INSERT INTO document_revisions (document_id, seq, kind, content, version) VALUES (?, ?, 'delta', ?, 1)",
  );
  let n = 0;
  return {
    name: "raw better-sqlite3, 1 transaction per commit",
    commitsPerStep: 1,
    step: () => {
      n += 1;
      const [entry, change] = stepWrites(n, n + 10);
      begin.run();
      insertEntry.run(n + 10, C, n, JSON.stringify((entry as { value: unknown }).value));
      insertRevision.run(
        DOC,
        n,
        JSON.stringify((change as { content: { ops: unknown } }).content.ops),
      );
      commit.run();
    },
    close: () => void db.close(),
  };
}

async function oneWriter(): Promise<Case> {
  const storage = await openBenchStorage();
  let n = 0;
  return {
    name: "storage.commit, 1 writer",
    commitsPerStep: 1,
    step: async () => {
      n += 1;
      await storage.commit([stepWrites(n, await storage.mintId())], () => undefined);
    },
    close: () => storage.close(),
  };
}

async function groupedWriters(): Promise<Case> {
  const storage = await openBenchStorage();
  let n = 0;
  return {
    name: `storage.commit, ${WRITERS} writers grouped (${WRITERS} batches per call)`,
    commitsPerStep: WRITERS,
    step: async () => {
      const batches: StorageWrite[][] = [];
      for (let i = 0; i < WRITERS; i++) batches.push(stepWrites(++n, await storage.mintId()));
      await storage.commit(batches, () => undefined);
    },
    close: () => storage.close(),
  };
}

async function uncoordinatedWriters(): Promise<Case> {
  const storage = await openBenchStorage();
  let n = 0;
  return {
    name: `storage.commit, ${WRITERS} concurrent writers, 1 batch per call`,
    commitsPerStep: WRITERS,
    step: async () => {
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          await storage.commit([stepWrites(++n, await storage.mintId())], () => undefined);
        }),
      );
    },
    close: () => storage.close(),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const cases = [
  rawBaseline(),
  await oneWriter(),
  await groupedWriters(),
  await uncoordinatedWriters(),
];
try {
  // Interleaved rounds, median per case: a noisy neighbour slows every case alike instead of one.
  const runs = cases.map(() => [] as Result[]);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, c] of cases.entries())
      (runs[i] as Result[]).push(await measure(c, SECONDS / ROUNDS));
  const results = runs.map((r) => ({
    ...(r[0] as Result),
    perSecond: median(r.map((x) => x.perSecond)),
    rounds: r.map((x) => Math.round(x.perSecond)),
  }));
  const [raw, one, grouped] = [results[0], results[1], results[2]] as [Result, Result, Result];
  console.table(
    results.map((r) => ({
      case: r.name,
      "commits/s (median)": Math.round(r.perSecond),
      "vs raw": (r.perSecond / raw.perSecond).toFixed(2) + "x",
      "vs 1 writer": (r.perSecond / one.perSecond).toFixed(2) + "x",
    })),
  );
  console.log(
    `goals: 1 writer >= 0.5x raw: ${(one.perSecond / raw.perSecond).toFixed(2)}x; ` +
      `${WRITERS} grouped writers >= 3x one writer: ${(grouped.perSecond / one.perSecond).toFixed(2)}x ` +
      `(${ROUNDS} interleaved rounds, ${SECONDS}s per case)`,
  );
  mkdirSync("bench-results", { recursive: true });
  writeFileSync(
    "bench-results/commit.json",
    JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, results }, null, 2) + "\n",
  );
} finally {
  for (const c of cases) await c.close();
  rmSync(dir, { recursive: true, force: true });
}
