// What `@durably/storage-sqlite`'s structural check at open costs against the file's size:
// builds files of about the given sizes (entries plus documents, written through the storage),
// then times `PRAGMA quick_check` on each, the whole `openSqliteStorage` + close with and
// without the check, and `PRAGMA integrity_check` for comparison. CPU time (user + system of
// this process) is the figure to read on a shared machine; wall time is printed next to it.
// The file is read once before timing, so the figures are for a file in the OS page cache.
// About a minute with the defaults; --smoke builds one 1 MB file and times it once.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/sqlite-open-check.bench.ts [--smoke] [sizesMB=1,10,40] [rounds=3]
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { ConversationId, DocumentId, EntryId, StorageWrite } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { scriptFlags } from "./script-flags.js";

const args = process.argv.slice(2).filter((a) => a !== "--smoke");
const { smoke } = scriptFlags();
const sizes = smoke ? [1] : (args[0] ?? "1,10,40").split(",").map(Number);
const rounds = smoke ? 1 : Number(args[1] ?? 3);
const dir = mkdtempSync(join(tmpdir(), "durably-open-check-"));

async function build(path: string, megabytes: number): Promise<void> {
  const storage = await openSqliteStorage(path);
  await storage.commit([[{ type: "conversation", value: { id: 1 as ConversationId } }]], () => {});
  const text = "lorem ipsum dolor sit amet ".repeat(10); // ~270 bytes per entry
  let docs = 0;
  while (
    statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) <
    megabytes * 1024 * 1024
  ) {
    const batch: StorageWrite[] = [];
    for (let i = 0; i < 500; i++) {
      const id = (await storage.mintId()) as EntryId;
      batch.push({
        type: "entry",
        value: { id, conversationId: 1 as ConversationId, kind: "note", data: { i, text } },
      });
    }
    const id = (await storage.mintId()) as DocumentId;
    batch.push({
      type: "document.create",
      record: { id, kind: "notes", scope: { kind: "session" }, key: `d${docs++}` },
      content: { kind: "base", version: 1, value: { text: text.repeat(4) } },
    });
    await storage.commit([batch], () => {});
  }
  await storage.close();
}

function cpu<T>(work: () => T): { ms: number; cpuMs: number; result: T } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = work();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000, result };
}

async function cpuAsync(work: () => Promise<unknown>): Promise<{ ms: number; cpuMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (xs: { ms: number; cpuMs: number }[]) =>
  `${median(xs.map((x) => x.cpuMs)).toFixed(1)} ms CPU (${median(xs.map((x) => x.ms)).toFixed(1)} ms wall)`;

for (const mb of sizes) {
  const path = join(dir, `${mb}mb.sqlite`);
  await build(path, mb);
  readFileSync(path); // into the page cache
  const size = statSync(path).size;
  const quick: { ms: number; cpuMs: number }[] = [];
  const integrity: { ms: number; cpuMs: number }[] = [];
  const openChecked: { ms: number; cpuMs: number }[] = [];
  const openUnchecked: { ms: number; cpuMs: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const db = new Database(path);
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    const q = cpu(() => db.pragma("quick_check"));
    if (JSON.stringify(q.result) !== '[{"quick_check":"ok"}]')
      throw new Error(JSON.stringify(q.result));
    quick.push(q);
    integrity.push(cpu(() => db.pragma("integrity_check")));
    db.close();
    openChecked.push(await cpuAsync(async () => (await openSqliteStorage(path)).close()));
    openUnchecked.push(
      await cpuAsync(async () => (await openSqliteStorage(path, { openCheck: "none" })).close()),
    );
  }
  console.log(
    `${(size / 1024 / 1024).toFixed(1)} MB${smoke ? " (SMOKE)" : ""}: quick_check ${fmt(quick)}; open+close with the check ${fmt(openChecked)}, without ${fmt(openUnchecked)}; integrity_check ${fmt(integrity)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
