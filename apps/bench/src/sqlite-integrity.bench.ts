// What SQLite's integrity work costs: row checksums (computed on every write,
// verified on every read) and the WAL size policy, measured as commits/s,
// entry reads/s and document reads/s of `@durably/storage-sqlite` called
// directly, in interleaved rounds of one run.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/sqlite-integrity.bench.ts [--smoke]
//     [--out <dir>] [--before <path to another storage-sqlite entry module, e.g. an older src/index.ts>]
//
// With --before, the same cases also run on that module (its own file, its own
// schema), interleaved with this one: a before/after comparison on one machine
// in one run. Writes sqlite-integrity.json to --out, BENCH_OUT or <repo>/bench-results.
import { statSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ConversationId, DocumentId, EntryId, Storage, StorageWrite } from "@durably/core";
import * as current from "@durably/storage-sqlite";
import { concurrentLoops, measureInterleaved, type CommitCase } from "./harness.js";
import { Scratch } from "./paths.js";
import { int, mib, textTable, times } from "./table.js";
import { seedRawWriters, stepWrites } from "./workload.js";
import { scriptFlags, writeReport } from "./script-flags.js";

type SqliteModule = Pick<typeof current, "SqliteStorage" | "BetterSqlite3Database">;

const args = process.argv.slice(2);
const { smoke, outDir } = scriptFlags(args);
const beforeAt = args.indexOf("--before");
const beforePath = beforeAt >= 0 ? args[beforeAt + 1] : undefined;
const ROUNDS = smoke ? 1 : 5;
const ROUND_MS = smoke ? 60 : Number(process.env.BENCH_ROUND_MS ?? 500);
const WARMUP_MS = smoke ? 20 : 300;
const ENTRIES = smoke ? 2_000 : 20_000;
const DOCUMENTS = smoke ? 50 : 500;
const DELTAS_PER_DOCUMENT = 4;

interface Variant {
  id: string;
  label: string;
  module: SqliteModule;
}

/**
 * Opens a storage of `module` on `path`; `pragma` runs on its connection after open.
 * `openCheck` is passed through (a build without the setting ignores it).
 */
async function openOn(
  module: SqliteModule,
  path: string,
  pragma?: string,
  openCheck?: "quick" | "none",
): Promise<Storage & { close(): Promise<void> }> {
  const db = module.BetterSqlite3Database.open(path);
  const storage = await module.SqliteStorage.open(db, {
    location: path,
    ...(openCheck !== undefined ? { openCheck } : {}),
  });
  if (pragma !== undefined) await db.get(pragma);
  return storage;
}

const walBytes = (path: string) => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};

/** Largest WAL seen per commit case, sampled every 256 commits. */
const largestWal = new Map<string, number>();
/** CPU microseconds and operations per case (warm-up and rounds): steadier than wall time on a shared machine. */
const cpu = new Map<string, { micros: number; ops: number }>();

/** Runs `loop`, adding the process CPU time it took and its operations to the case's total. */
async function counted(id: string, loop: () => Promise<number>): Promise<number> {
  const start = process.cpuUsage();
  const ops = await loop();
  const used = process.cpuUsage(start);
  const total = cpu.get(id) ?? { micros: 0, ops: 0 };
  cpu.set(id, { micros: total.micros + used.user + used.system, ops: total.ops + ops });
  return ops;
}

function commitCase(variant: Variant, scratch: Scratch, walPolicy?: string): CommitCase {
  const id = `commit/${variant.id}${walPolicy ? `/${walPolicy}` : ""}`;
  const pragma =
    walPolicy === "no-limit"
      ? "PRAGMA journal_size_limit = -1"
      : walPolicy === "limit-0"
        ? "PRAGMA journal_size_limit = 0"
        : undefined;
  return {
    id,
    family: "direct",
    label: `commits/s, ${variant.label}${walPolicy ? `, WAL ${walPolicy}` : ""}`,
    backend: variant.id,
    writers: 1,
    async open() {
      const path = scratch.path(`${variant.id}-commit.sqlite`);
      const storage = await openOn(variant.module, path, pragma);
      const [writer] = await seedRawWriters(storage, 1);
      let n = 0;
      largestWal.set(id, 0);
      return {
        run: (deadline) =>
          counted(id, () =>
            concurrentLoops(1, deadline, async () => {
              const entryId = (await storage.mintId()) as EntryId;
              const result = await storage.commit([stepWrites(writer!, entryId, ++n)], () => {});
              if (result.refused) throw result.refused;
              if (n % 256 === 0)
                largestWal.set(id, Math.max(largestWal.get(id) ?? 0, walBytes(path)));
            }),
          ),
        close: () => storage.close(),
      };
    },
  };
}

/**
 * A file with `ENTRIES` entries and `DOCUMENTS` documents (a 1 KiB base plus
 * deltas each), written, closed and reopened: the reads then start from the
 * file, with no current value cached by a commit.
 */
async function preloaded(module: SqliteModule, path: string): Promise<Storage> {
  const writer = await openOn(module, path);
  const C = 1 as ConversationId;
  await writer.commit([[{ type: "conversation", value: { id: C } }]], () => {});
  for (let start = 0; start < ENTRIES; start += 1000) {
    const batch: StorageWrite[] = [];
    for (let i = start; i < Math.min(ENTRIES, start + 1000); i++)
      batch.push({
        type: "entry",
        value: {
          id: (i + 10) as EntryId,
          conversationId: C,
          kind: "bench.step",
          data: { n: i, text: `step ${i}: one unit of agent work, with a line of model output` },
        },
      });
    await writer.commit([batch], () => {});
  }
  const docId = (i: number) => (ENTRIES + 100 + i) as DocumentId;
  const creates: StorageWrite[] = Array.from({ length: DOCUMENTS }, (_, i) => ({
    type: "document.create",
    record: { id: docId(i), kind: "bench.state", key: String(i), scope: { kind: "session" } },
    content: { kind: "base", version: 1, value: { n: 0, notes: "n".repeat(1024) } },
  }));
  await writer.commit([creates], () => {});
  for (let d = 0; d < DELTAS_PER_DOCUMENT; d++)
    await writer.commit(
      [
        Array.from({ length: DOCUMENTS }, (_, i) => ({
          type: "document.change" as const,
          id: docId(i),
          content: { kind: "delta" as const, version: 1, ops: [["s", ["n"], d + 1]] as never },
        })),
      ],
      () => {},
    );
  await writer.close();
  return openOn(module, path);
}

function readCase(variant: Variant, scratch: Scratch, what: "entry" | "document"): CommitCase {
  const id = `${what}-read/${variant.id}`;
  return {
    id,
    family: "direct",
    label: `${what} reads/s, ${variant.label}`,
    backend: variant.id,
    writers: 1,
    async open() {
      const storage = await preloaded(variant.module, scratch.path(`${variant.id}-${what}.sqlite`));
      let seed = 12345;
      const next = (range: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed % range;
      };
      return {
        run: (deadline) =>
          counted(id, () =>
            concurrentLoops(1, deadline, async () => {
              if (what === "entry") {
                const found = await storage.entry((next(ENTRIES) + 10) as EntryId);
                if (found === undefined) throw new Error("entry missing");
              } else {
                const doc = await storage.document(
                  (ENTRIES + 100 + next(DOCUMENTS)) as DocumentId,
                  "current",
                );
                if (doc?.deltasSinceBase !== DELTAS_PER_DOCUMENT) throw new Error("document wrong");
              }
            }),
          ),
        close: () => storage.close(),
      };
    },
  };
}

/** Size of each preloaded file, by case id (reported beside the open cases). */
const fileBytes = new Map<string, number>();

/**
 * Open plus close of the preloaded file: the structural check at open
 * (`PRAGMA quick_check`, reading every page) against open without it.
 */
function openCase(variant: Variant, scratch: Scratch, openCheck?: "none"): CommitCase {
  const id = `open/${variant.id}${openCheck ? "/no-check" : ""}`;
  return {
    id,
    family: "direct",
    label: `opens/s (open + close), ${variant.label}${openCheck ? ", openCheck none" : ""}`,
    backend: variant.id,
    writers: 1,
    async open() {
      const path = scratch.path(`${variant.id}-open${openCheck ? "-none" : ""}.sqlite`);
      await (await preloaded(variant.module, path)).close();
      fileBytes.set(id, statSync(path).size + walBytes(path));
      return {
        run: (deadline) =>
          counted(id, () =>
            concurrentLoops(1, deadline, async () => {
              await (await openOn(variant.module, path, undefined, openCheck)).close();
            }),
          ),
        close: async () => {},
      };
    },
  };
}

/** The newest 50 entries of the conversation, the read a resumed session makes (the chains are checked). */
function scanCase(variant: Variant, scratch: Scratch): CommitCase {
  const id = `scan/${variant.id}`;
  return {
    id,
    family: "direct",
    label: `scans/s (newest 50 entries), ${variant.label}`,
    backend: variant.id,
    writers: 1,
    async open() {
      const storage = await preloaded(variant.module, scratch.path(`${variant.id}-scan.sqlite`));
      return {
        run: (deadline) =>
          counted(id, () =>
            concurrentLoops(1, deadline, async () => {
              const page = await storage.scanEntries(
                { conversationId: 1 as ConversationId, order: "descending" },
                50,
              );
              if (page.items.length !== 50) throw new Error("scan short");
            }),
          ),
        close: () => storage.close(),
      };
    },
  };
}

const variants: Variant[] = [{ id: "this", label: "this package", module: current }];
if (beforePath !== undefined) {
  const file = isAbsolute(beforePath) ? beforePath : resolve(process.cwd(), beforePath);
  const module = (await import(pathToFileURL(file).href)) as SqliteModule;
  variants.push({ id: "before", label: `before (${beforePath})`, module });
}

const scratch = new Scratch();
try {
  const cases: CommitCase[] = [];
  for (const v of variants) cases.push(commitCase(v, scratch));
  const self = variants[0] as Variant;
  cases.push(commitCase(self, scratch, "no-limit"), commitCase(self, scratch, "limit-0"));
  for (const v of variants)
    cases.push(
      readCase(v, scratch, "entry"),
      readCase(v, scratch, "document"),
      scanCase(v, scratch),
      openCase(v, scratch),
    );
  cases.push(openCase(self, scratch, "none"));
  const started = performance.now();
  const results = await measureInterleaved(cases, {
    rounds: ROUNDS,
    roundMs: ROUND_MS,
    warmupMs: WARMUP_MS,
    log: (line) => console.error(line),
  });
  const byId = new Map(results.map((r) => [r.id, r]));
  const compareTo = (id: string): string | undefined => {
    if (id === "commit/this/no-limit" || id === "commit/this/limit-0") return "commit/this";
    if (id === "open/this") return "open/this/no-check";
    if (id.endsWith("/before")) return undefined;
    return beforePath !== undefined ? id.replace(/\/this$/, "/before") : undefined;
  };
  const cpuPerOp = (id: string) => {
    const c = cpu.get(id);
    return c === undefined || c.ops === 0 ? Number.NaN : c.micros / c.ops;
  };
  const table = textTable(
    ["case", "per second (median)", "rounds", "vs", "µs CPU/op", "CPU vs", "largest WAL / file"],
    results.map((r) => {
      const base = compareTo(r.id);
      const other = base === undefined ? undefined : byId.get(base);
      const wal = largestWal.get(r.id) ?? fileBytes.get(r.id);
      return [
        r.label,
        int(r.perSecond),
        r.rounds.map((x) => int(x)).join(" / "),
        other ? `${times(r.perSecond / other.perSecond)} of ${other.id}` : "",
        cpuPerOp(r.id).toFixed(1),
        other ? times(cpuPerOp(r.id) / cpuPerOp(other.id)) : "",
        wal === undefined ? "" : mib(wal),
      ];
    }),
  );
  const header = `SQLite integrity costs: ${ROUNDS} interleaved rounds of ${ROUND_MS} ms per case, ${ENTRIES} entries and ${DOCUMENTS} documents preloaded for reads${smoke ? " (SMOKE: figures meaningless)" : ""}; node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`;
  console.log(`${header}\n${table}`);
  writeReport(outDir, "sqlite-integrity.json", {
    smoke,
    rounds: ROUNDS,
    roundMs: ROUND_MS,
    before: beforePath ?? null,
    seconds: (performance.now() - started) / 1000,
    results: results.map((r) => ({
      ...r,
      cpuMicrosPerOp: cpuPerOp(r.id),
      largestWal: largestWal.get(r.id),
      fileBytes: fileBytes.get(r.id),
    })),
  });
} finally {
  scratch.dispose();
}
