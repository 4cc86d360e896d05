// What JSONL compaction buys and costs, on two workloads of `@durably/storage-jsonl` called
// directly (fsync off):
//
//   churn:   N commits that each change one current-only document (a base every 16th, deltas
//            between), plus a few hundred entries: history is almost all churn;
//   entries: N commits that each append one entry and change the current-only document: the
//            entries are live data forever.
//
// For each: reopen of the uncompacted log, reopen after `compact()`, and a raw read + JSON.parse
// of every line of the compacted generation's files (medians of alternating in-process runs,
// after a GC), bytes on disk vs the live data (the JSON of every readable record), and commit
// throughput while a compaction runs in the background vs without (alternating windows).
//
//   node --conditions=@durably/source --import tsx apps/bench/src/jsonl-compaction.bench.ts [--smoke] [--out <dir>]
//
// --smoke (or BENCH_SMOKE=1) runs 10,000 commits per workload instead of 100,000. Writes
// jsonl-compaction.json to --out, BENCH_OUT or <repo>/bench-results.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import type { ConversationId, DocumentId, EntryId, Storage, StorageWrite } from "@durably/core";
import { openJsonlStorage, type JsonlStorage } from "@durably/storage-jsonl";
import { bytesOnDisk, Scratch } from "./paths.js";
import { scriptFlags, writeReport } from "./script-flags.js";
import { median } from "./stats.js";
import { int, mib, ms, textTable, times } from "./table.js";

const args = process.argv.slice(2);
const { smoke, outDir } = scriptFlags(args);
const COMMITS = smoke ? 10_000 : 100_000;
const CHURN_ENTRIES = 300;
const REOPENS = smoke ? 3 : 5;
const WINDOWS = smoke ? 2 : 3;

const CONVERSATION = 1 as ConversationId;
const DOC = 2 as DocumentId;

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function commit(storage: Storage, writes: StorageWrite[]): Promise<void> {
  const result = await storage.commit([writes], () => undefined);
  if (result.refused) throw result.refused;
}

function docChange(step: number): StorageWrite {
  return step % 16 === 0
    ? {
        type: "document.change",
        id: DOC,
        content: { kind: "base", version: 1, value: { step, text: `value ${step}` } },
      }
    : {
        type: "document.change",
        id: DOC,
        content: {
          kind: "delta",
          version: 1,
          ops: [
            ["s", ["step"], step],
            ["s", ["text"], `value ${step}`],
          ],
        },
      };
}

const entry = (id: number, step: number): StorageWrite => ({
  type: "entry",
  value: {
    id: id as EntryId,
    conversationId: CONVERSATION,
    kind: "note",
    data: { step, text: `entry number ${step}` },
  },
});

/** Fills a fresh storage; returns the next free id. */
async function fill(storage: Storage, workload: "churn" | "entries"): Promise<number> {
  await commit(storage, [
    { type: "conversation", value: { id: CONVERSATION } },
    {
      type: "document.create",
      record: {
        id: DOC,
        kind: "bench.counter",
        scope: { kind: "conversation", conversationId: CONVERSATION },
      },
      content: { kind: "base", version: 1, value: { step: 0, text: "" } },
    },
  ]);
  let id = 10;
  const every = Math.floor(COMMITS / CHURN_ENTRIES);
  for (let step = 1; step <= COMMITS; step++) {
    const writes = [docChange(step)];
    if (workload === "entries" || step % every === 0) writes.unshift(entry(id++, step));
    await commit(storage, writes);
  }
  return id;
}

/** Bytes of the JSON of every readable record: the live data. */
async function liveBytes(storage: Storage): Promise<number> {
  let total = Buffer.byteLength(JSON.stringify(await storage.conversation(CONVERSATION)));
  total += Buffer.byteLength(JSON.stringify((await storage.document(DOC, "current"))?.value));
  let cursor: Parameters<Storage["scanEntries"]>[2];
  do {
    const page = await storage.scanEntries({ conversationId: CONVERSATION }, 10_000, cursor);
    for (const item of page.items) total += Buffer.byteLength(JSON.stringify(item));
    cursor = page.next;
  } while (cursor !== undefined);
  return total;
}

/** ms to open the storage (closed again outside the timing). */
async function reopenMs(dir: string): Promise<number> {
  gc();
  const start = performance.now();
  const storage = await openJsonlStorage(dir, { compaction: false });
  const elapsed = performance.now() - start;
  await storage.close();
  return elapsed;
}

/** ms to read every file of the current generation whole and JSON.parse each line: the floor. */
function rawReadMs(dir: string, generation: number): number {
  const at = generation === 0 ? dir : join(dir, `gen-${generation}`);
  gc();
  const start = performance.now();
  let lines = 0;
  for (const name of readdirSync(at)) {
    if (!name.endsWith(".jsonl")) continue;
    const text = readFileSync(join(at, name), "utf8");
    for (
      let from = 0, nl = text.indexOf("\n");
      nl >= 0;
      from = nl + 1, nl = text.indexOf("\n", from)
    ) {
      JSON.parse(text.slice(from, nl));
      lines++;
    }
  }
  if (lines === 0) throw new Error(`no lines in ${at}`);
  return performance.now() - start;
}

/** Commits/s for `windowMs`, with a compaction running in the background during the window when `during`. */
async function throughput(
  storage: JsonlStorage,
  nextId: { id: number },
  windowMs: number,
  during: boolean,
) {
  const compaction = during ? storage.compact() : undefined;
  let running = during;
  void compaction?.finally(() => (running = false));
  const start = performance.now();
  let n = 0;
  let step = COMMITS;
  while (performance.now() - start < windowMs && (!during || running)) {
    await commit(storage, [entry(nextId.id++, ++step), docChange(step)]);
    n++;
  }
  const elapsed = performance.now() - start;
  await compaction;
  return { perSecond: (n * 1000) / elapsed, commits: n, ms: elapsed };
}

interface WorkloadResult {
  workload: "churn" | "entries";
  commits: number;
  uncompactedBytes: number;
  compactedBytes: number;
  liveBytes: number;
  compactMs: number;
  reopenUncompactedMs: number;
  reopenCompactedMs: number;
  rawSnapshotReadMs: number;
  commitsPerSecond?: { without: number; during: number; ratio: number; windows: number };
}

async function measure(scratch: Scratch, workload: "churn" | "entries"): Promise<WorkloadResult> {
  const dir = scratch.path(workload);
  const uncompacted = scratch.path(`${workload}-uncompacted`);
  let storage = await openJsonlStorage(dir, { compaction: false });
  const nextId = { id: await fill(storage, workload) };
  await storage.close();
  // The same log twice: one copy stays uncompacted to reopen.
  mkdirSync(uncompacted);
  for (const name of readdirSync(dir))
    if (name.endsWith(".jsonl"))
      writeFileSync(join(uncompacted, name), readFileSync(join(dir, name)));
  storage = await openJsonlStorage(dir, { compaction: false });
  const startCompact = performance.now();
  await storage.compact();
  const compactMs = performance.now() - startCompact;
  const live = await liveBytes(storage);
  const generation = storage.generation;
  await storage.close();
  const result: WorkloadResult = {
    workload,
    commits: COMMITS,
    uncompactedBytes: bytesOnDisk(uncompacted),
    compactedBytes: bytesOnDisk(dir),
    liveBytes: live,
    compactMs,
    reopenUncompactedMs: 0,
    reopenCompactedMs: 0,
    rawSnapshotReadMs: 0,
  };
  const old: number[] = [];
  const compacted: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < REOPENS; i++) {
    old.push(await reopenMs(uncompacted));
    compacted.push(await reopenMs(dir));
    raw.push(rawReadMs(dir, generation));
  }
  result.reopenUncompactedMs = median(old);
  result.reopenCompactedMs = median(compacted);
  result.rawSnapshotReadMs = median(raw);
  if (workload === "entries") {
    storage = await openJsonlStorage(dir, { compaction: false });
    const without: number[] = [];
    const during: number[] = [];
    for (let i = 0; i < WINDOWS; i++) {
      const busy = await throughput(storage, nextId, 10_000, true);
      during.push(busy.perSecond);
      without.push((await throughput(storage, nextId, busy.ms, false)).perSecond);
    }
    await storage.close();
    result.commitsPerSecond = {
      without: median(without),
      during: median(during),
      ratio: median(during) / median(without),
      windows: WINDOWS,
    };
  }
  return result;
}

const scratch = new Scratch();
const load = loadavg();
try {
  const results = [await measure(scratch, "churn"), await measure(scratch, "entries")];
  const loadAfter = loadavg();
  const rows = results.map((r) => [
    r.workload,
    int(r.commits),
    mib(r.uncompactedBytes),
    mib(r.compactedBytes),
    mib(r.liveBytes),
    times(r.compactedBytes / r.liveBytes),
    ms(r.compactMs),
    ms(r.reopenUncompactedMs),
    ms(r.reopenCompactedMs),
    ms(r.rawSnapshotReadMs),
    times(r.reopenCompactedMs / r.rawSnapshotReadMs),
    times(r.reopenCompactedMs / r.reopenUncompactedMs),
    r.commitsPerSecond
      ? `${int(r.commitsPerSecond.during)} / ${int(r.commitsPerSecond.without)} = ${times(r.commitsPerSecond.ratio)}`
      : "-",
  ]);
  console.log(
    `JSONL compaction${smoke ? " (smoke)" : ""}: ${cpus().length} cores, load average ${load.map((l) => l.toFixed(2)).join(" ")} before, ${loadAfter.map((l) => l.toFixed(2)).join(" ")} after`,
  );
  console.log(
    textTable(
      [
        "workload",
        "commits",
        "log",
        "compacted",
        "live",
        "disk/live",
        "compact ms",
        "reopen log ms",
        "reopen compacted ms",
        "raw read ms",
        "vs raw",
        "vs log",
        "commits/s during / without",
      ],
      rows,
    ),
  );
  console.log(
    "goals: disk/live <= 2x; reopen compacted <= 2x raw read; churn reopen <= 0.2x the log's; commits/s during a compaction >= 0.7x",
  );
  writeReport(outDir, "jsonl-compaction.json", {
    smoke,
    loadavg: { before: load, after: loadAfter },
    cores: cpus().length,
    results,
  });
} finally {
  scratch.dispose();
}
