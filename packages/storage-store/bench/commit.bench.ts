// Session commits per second on StoreStorage over classic-level (LevelDB), next to raw
// `db.batch()` of the same keys and values measured in the same run. Each commit appends one entry
// and changes one document by a delta. "64 writers" runs 64 saves at once: the Session's group
// commit stores them in shared storage calls (one LevelDB batch each); the raw baseline writes the
// 64 commits' keys in one db.batch(). Run: pnpm --filter @durably/storage-store bench
// Env: DURABLY_BENCH_MS (time per round, default 1000), DURABLY_BENCH_ROUNDS (default 3),
// DURABLY_BENCH_OUT (JSON result path).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ClassicLevel } from "classic-level";
import { ROOT_CONVERSATION_ID, Session, defineDoc } from "@durably/core";
import type { DocumentId, EntryId, StorageWrite } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";

const CASE_MS = Number(process.env.DURABLY_BENCH_MS ?? 1000);
/** Rounds per case, alternating raw and ours so machine noise hits both alike; the median counts. */
const ROUNDS = Number(process.env.DURABLY_BENCH_ROUNDS ?? 3);
const OUT =
  process.env.DURABLY_BENCH_OUT ??
  new URL("../bench-results/commit.json", import.meta.url).pathname;
const pad = (n: number) => String(n).padStart(16, "0");
const text = (i: number) => `step ${i}: ${"lorem ipsum ".repeat(8)}`;

interface Result {
  case: string;
  writers: number;
  commits: number;
  seconds: number;
  perSecond: number;
}

async function timed(
  name: string,
  writers: number,
  run: (commits: number) => Promise<void>,
): Promise<Result> {
  // Warm up, then run whole rounds of `writers` commits until the time is up.
  await run(writers * 4);
  let commits = 0;
  const start = performance.now();
  while (performance.now() - start < CASE_MS) {
    await run(writers);
    commits += writers;
  }
  const seconds = (performance.now() - start) / 1000;
  return { case: name, writers, commits, seconds, perSecond: commits / seconds };
}

function fresh() {
  const dir = mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), "durably-bench-"));
  return {
    location: join(dir, "db"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const Notes = defineDoc<{ step: number }>({
  kind: "bench.notes",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ step: 0 }),
  // Deltas only, as the raw baseline writes: a base per commit would be a different workload.
  checkpointWhen: () => false,
});

/** `writers` concurrent saves per round through one Session; its group commit shares storage calls. */
async function sessionCommits(writers: number): Promise<Result> {
  const { location, cleanup } = fresh();
  const session = await Session.open(
    await StoreStorage.open(levelStore(new ClassicLevel(location))),
  );
  await session.commit(async (tx) => {
    (await tx.doc(Notes, ROOT_CONVERSATION_ID)).step = 0;
  });
  let step = 0;
  const save = () =>
    session.commit(async (tx) => {
      const i = ++step;
      await tx.appendEntry(ROOT_CONVERSATION_ID, { kind: "note", data: { text: text(i) } });
      (await tx.doc(Notes, ROOT_CONVERSATION_ID)).step = i;
    });
  const result = await timed("Session.commit on StoreStorage", writers, async (commits) => {
    for (let done = 0; done < commits; done += writers)
      await Promise.all(Array.from({ length: writers }, save));
  });
  await session.close();
  cleanup();
  return result;
}

/** The same writes straight into StoreStorage.commit (no Session): `writers` batches per call. */
async function storageCommits(writers: number): Promise<Result> {
  const { location, cleanup } = fresh();
  const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
  const doc = 2 as DocumentId;
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: ROOT_CONVERSATION_ID } },
        {
          type: "document.create",
          record: { id: doc, kind: "bench.notes", scope: { kind: "session" } },
          content: { kind: "base", version: 1, value: { step: 0 } },
        },
      ],
    ],
    () => undefined,
  );
  let step = 0;
  const result = await timed("StoreStorage.commit", writers, async (commits) => {
    for (let done = 0; done < commits; done += writers) {
      const batches: StorageWrite[][] = [];
      for (let w = 0; w < writers; w++) {
        const id = (await storage.mintId()) as EntryId;
        step++;
        batches.push([
          {
            type: "entry",
            value: {
              id,
              conversationId: ROOT_CONVERSATION_ID,
              kind: "note",
              data: { text: text(step) },
            },
          },
          {
            type: "document.change",
            id: doc,
            content: { kind: "delta", version: 1, ops: [["s", ["step"], step]] },
          },
        ]);
      }
      const outcome = await storage.commit(batches, () => undefined);
      if (outcome.refused) throw outcome.refused;
    }
  });
  await storage.close();
  cleanup();
  return result;
}

async function rawBatch(writers: number): Promise<Result> {
  const { location, cleanup } = fresh();
  const db = new ClassicLevel(location);
  await db.open();
  let id = 2;
  let seq = 1;
  const result = await timed("raw db.batch()", writers, async (commits) => {
    for (let done = 0; done < commits; done += writers) {
      const ops: { type: "put"; key: string; value: string }[] = [];
      for (let w = 0; w < writers; w++) {
        id++;
        seq++;
        const entry = { id, conversationId: 1, kind: "note", data: { text: text(seq) } };
        ops.push({
          type: "put",
          key: `e/${pad(1)}/${pad(id)}`,
          value: `{"seq":${seq},"entry":${JSON.stringify(entry)}}`,
        });
        ops.push({ type: "put", key: `ei/${pad(id)}`, value: pad(1) });
        ops.push({
          type: "put",
          key: `r/${pad(2)}/${pad(seq)}`,
          value: JSON.stringify({ kind: "delta", version: 1, ops: [["s", ["step"], seq]] }),
        });
      }
      ops.push({ type: "put", key: "m/counters", value: `{"seq":${seq},"ids":${id}}` });
      await db.batch(ops);
    }
  });
  await db.close();
  cleanup();
  return result;
}

const rows: { writers: number; ours: Result; storage: Result; raw: Result; ratio: number }[] = [];
const median = (results: Result[]) =>
  [...results].sort((a, b) => a.perSecond - b.perSecond)[results.length >> 1] as Result;
for (const writers of [1, 64]) {
  const raws: Result[] = [];
  const ourRuns: Result[] = [];
  const storageRuns: Result[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    raws.push(await rawBatch(writers));
    ourRuns.push(await sessionCommits(writers));
    storageRuns.push(await storageCommits(writers));
  }
  const raw = median(raws);
  const ours = median(ourRuns);
  const storage = median(storageRuns);
  rows.push({ writers, ours, storage, raw, ratio: ours.perSecond / raw.perSecond });
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(
  `\nSession on StoreStorage on classic-level: entry + document delta per commit (median of ${ROUNDS} alternating rounds of ${CASE_MS} ms)\n`,
);
console.log(
  "| writers | Session commits/s | raw db.batch() commits/s | ratio (goal >= 0.5) | StoreStorage.commit alone | its ratio |",
);
console.log(
  "|--------:|------------------:|-------------------------:|--------------------:|--------------------------:|----------:|",
);
for (const r of rows)
  console.log(
    `| ${r.writers} | ${fmt(r.ours.perSecond)} | ${fmt(r.raw.perSecond)} | ${r.ratio.toFixed(2)}x | ${fmt(r.storage.perSecond)} | ${(r.storage.perSecond / r.raw.perSecond).toFixed(2)}x |`,
  );
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(
  OUT,
  JSON.stringify(
    {
      bench: "storage-store/commit",
      roundMs: CASE_MS,
      rounds: ROUNDS,
      node: process.version,
      rows,
    },
    null,
    2,
  ) + "\n",
);
console.log(`\nwrote ${OUT}`);
