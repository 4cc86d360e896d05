// Session commits per second over MemoryStorage, next to raw MemoryStorage.commit in the same run.
// Run: pnpm --filter @durably/core bench   (or: node --conditions=@durably/source --import tsx bench/session-commit.bench.ts)
// Env: DURABLY_BENCH_COMMITS (default 20000), DURABLY_BENCH_DELAY_MS (default 0; a per-call storage latency).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  ROOT_CONVERSATION_ID,
  Session,
  type Batch,
  type CommitResult,
  type EntryId,
  type Seq,
  type Storage,
  type StorageWrite,
} from "../src/index.js";
// Core cannot depend on @durably/storage-memory (it depends on core: a package cycle), so this dev-only script uses its source.
import { MemoryStorage } from "../../storage-memory/src/index.js";

const COMMITS = Number(process.env.DURABLY_BENCH_COMMITS ?? 20_000);
const DELAY_MS = Number(process.env.DURABLY_BENCH_DELAY_MS ?? 0);

/** MemoryStorage with an optional fixed latency per commit call (what a disk or network round trip costs). */
function withLatency(storage: MemoryStorage): Storage {
  if (DELAY_MS <= 0) return storage;
  const commit = storage.commit.bind(storage);
  return Object.assign(Object.create(storage) as Storage, {
    async commit(
      batches: readonly Batch[],
      receive: (i: number, s: Seq) => void,
    ): Promise<CommitResult> {
      await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
      return commit(batches, receive);
    },
  });
}

function entryWrite(id: number, i: number): StorageWrite {
  return {
    type: "entry",
    value: {
      id: id as EntryId,
      conversationId: ROOT_CONVERSATION_ID,
      kind: "bench",
      data: { i, text: "a step of work" },
    },
  };
}

async function time(run: () => Promise<number>): Promise<{ ms: number; calls: number }> {
  const start = performance.now();
  const calls = await run();
  return { ms: performance.now() - start, calls };
}

async function rawCommits(): Promise<{ ms: number; calls: number }> {
  const storage = withLatency(new MemoryStorage());
  await storage.commit(
    [[{ type: "conversation", value: { id: ROOT_CONVERSATION_ID } }]],
    () => undefined,
  );
  const result = await time(async () => {
    for (let i = 0; i < COMMITS; i++) {
      const id = await storage.mintId();
      await storage.commit([[entryWrite(id, i)]], () => undefined);
    }
    return COMMITS;
  });
  await storage.close();
  return result;
}

async function sessionCommits(writers: number): Promise<{ ms: number; calls: number }> {
  const session = await Session.open(withLatency(new MemoryStorage()));
  const before = session.commitStats.calls;
  const perWriter = Math.ceil(COMMITS / writers);
  const result = await time(async () => {
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++)
          await session.commit((tx) =>
            tx.appendEntry(ROOT_CONVERSATION_ID, {
              kind: "bench",
              data: { i: w * perWriter + i, text: "a step of work" },
            }),
          );
      }),
    );
    return session.commitStats.calls - before;
  });
  await session.close();
  return result;
}

const rows: {
  case: string;
  commits: number;
  ms: number;
  perSecond: number;
  storageCalls: number;
  vsRaw: string;
}[] = [];
const raw = await rawCommits();
const rawRate = (COMMITS / raw.ms) * 1000;
rows.push({
  case: "raw MemoryStorage.commit, 1 writer",
  commits: COMMITS,
  ms: raw.ms,
  perSecond: rawRate,
  storageCalls: raw.calls,
  vsRaw: "1.00x",
});
for (const writers of [1, 64]) {
  const r = await sessionCommits(writers);
  const n = Math.ceil(COMMITS / writers) * writers;
  const rate = (n / r.ms) * 1000;
  rows.push({
    case: `Session.commit, ${writers} writer${writers > 1 ? "s" : ""}`,
    commits: n,
    ms: r.ms,
    perSecond: rate,
    storageCalls: r.calls,
    vsRaw: `${(rate / rawRate).toFixed(2)}x`,
  });
}

console.log(
  `session-commit bench: ${COMMITS} commits of one entry each, storage latency ${DELAY_MS} ms per call`,
);
console.table(
  rows.map((r) => ({
    case: r.case,
    commits: r.commits,
    "commits/s": Math.round(r.perSecond),
    "storage calls": r.storageCalls,
    "batches/call": (r.commits / r.storageCalls).toFixed(1),
    "vs raw": r.vsRaw,
  })),
);
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "bench-results");
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, `session-commit${DELAY_MS > 0 ? `-${DELAY_MS}ms` : ""}.json`),
  JSON.stringify({ commits: COMMITS, delayMs: DELAY_MS, rows }, null, 2),
);
