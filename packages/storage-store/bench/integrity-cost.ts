/**
 * A short measurement of what the integrity checks cost on classic-level:
 * commits/s (one commit call at a time: an entry and a document delta per
 * batch, 1 and 64 batches per call; and 1 batch per call with `sync: true`), point reads/s (`entry(id)`), scanned
 * entries/s (`scanEntries`, pages of 50), and the time to reopen a store
 * (commit chain and LevelDB file checks). Run from the package directory:
 *
 *   node --conditions=@durably/source --import tsx bench/integrity-cost.ts [seconds per case]
 *
 * Prints one JSON line: each case's rate and its process CPU time per
 * operation. Numbers on a shared machine are noisy (CPU time less so than
 * rates): compare runs made back to back, alternating the builds compared.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import type { ConversationId, DocumentId, EntryId, StorageWrite } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";

const SECONDS = Number(process.argv[2] ?? 2);
const C = 1 as ConversationId;
const DOC = 2 as DocumentId;
const none = () => undefined;
let nextId = 10;

const batch = (i: number): StorageWrite[] => [
  {
    type: "entry",
    value: { id: nextId++, conversationId: C, kind: "message", data: { i, text: "x".repeat(300) } },
  } as unknown as StorageWrite,
  {
    type: "document.change",
    id: DOC,
    content: { kind: "delta", version: 1, ops: [["s", ["n"], i]] },
  },
];

/** Operations per wall-clock second, and process CPU microseconds (all threads) per operation: steadier under load. */
async function timed(run: () => Promise<number>): Promise<{ perSecond: number; cpuUs: number }> {
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() < end) done += await run();
  const used = process.cpuUsage(cpu);
  return {
    perSecond: Math.round((done * 1000) / (performance.now() - start)),
    cpuUs: Math.round(((used.user + used.system) / done) * 100) / 100,
  };
}

const dir = mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), "durably-integrity-"));
try {
  const location = join(dir, "db");
  const open = () => StoreStorage.open(levelStore(new ClassicLevel(location)));
  let storage = await open();
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: C } },
        {
          type: "document.create",
          record: { id: DOC, kind: "bench.counter", scope: { kind: "session" } },
          content: { kind: "base", version: 1, value: { n: 0 } },
        } as unknown as StorageWrite,
      ],
    ],
    none,
  );
  let i = 0;
  const commitsPerSecond = await timed(async () => {
    await storage.commit([batch(++i)], none);
    return 1;
  });
  const batchesPerSecond64 = await timed(async () => {
    await storage.commit(
      Array.from({ length: 64 }, () => batch(++i)),
      none,
    );
    return 64;
  });
  const firstEntry = 10;
  const lastEntry = nextId - 1;
  const pointReadsPerSecond = await timed(async () => {
    for (let k = 0; k < 100; k++) {
      const id = firstEntry + Math.floor(Math.random() * (lastEntry - firstEntry));
      if ((await storage.entry(id as EntryId)) === undefined)
        throw new Error(`entry ${id} missing`);
    }
    return 100;
  });
  const scannedPerSecond = await timed(async () => {
    const start = firstEntry + Math.floor(Math.random() * (lastEntry - firstEntry - 60));
    const page = await storage.scanEntries(
      { conversationId: C, minEntryId: start as EntryId, order: "ascending" },
      50,
    );
    return page.items.length;
  });
  const commits = i;
  await storage.close();
  // The store on disk before reopening: its size is what the table checks read.
  const { readdirSync, statSync } = await import("node:fs");
  const bytes = readdirSync(location).reduce((n, f) => n + statSync(join(location, f)).size, 0);
  storage = await open();
  await storage.close();
  // First reopen: the chain is verified from the start (no open verified it yet).
  let t = performance.now();
  storage = await open();
  const reopenMs = Math.round(performance.now() - t);
  await storage.commit([batch(++i)], none); // records the verified seq for the next open
  await storage.close();
  t = performance.now();
  storage = await open();
  const reopenAfterVerifiedMs = Math.round(performance.now() - t);
  await storage.close();
  t = performance.now();
  storage = await StoreStorage.open(levelStore(new ClassicLevel(location), { checkTables: false }));
  const reopenWithoutTableChecksMs = Math.round(performance.now() - t);
  await storage.close();
  // The same single-batch commits with each write synced to disk (levelStore's `sync: true`).
  storage = await StoreStorage.open(levelStore(new ClassicLevel(location), { sync: true }));
  const syncedCommitsPerSecond = await timed(async () => {
    await storage.commit([batch(++i)], none);
    return 1;
  });
  await storage.close();
  process.stdout.write(
    JSON.stringify({
      commitsPerSecond,
      syncedCommitsPerSecond,
      batchesPerSecond64,
      pointReadsPerSecond,
      scannedPerSecond,
      commits,
      entries: lastEntry - firstEntry + 1,
      megabytes: Math.round(bytes / 1e5) / 10,
      reopenMs,
      reopenAfterVerifiedMs,
      reopenWithoutTableChecksMs,
    }) + "\n",
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
