/**
 * One reopen measurement in a fresh process, so resident memory means
 * something: `node reopen-child.js <jsonl|sqlite> <durably|raw> <path>`.
 * Prints one JSON line: { ms, rssBefore, rss, heapUsed, items }.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "better-sqlite3";

export interface ChildReport {
  ms: number;
  /** RSS with every module loaded, before opening anything. */
  rssBefore: number;
  /** RSS right after the reopen, after a full GC, with what it opened still alive. */
  rss: number;
  heapUsed: number;
  /** Lines or rows read (raw readers), or 0. */
  items: number;
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** The raw JSONL reader: read every `.jsonl` file and JSON.parse every line. */
function readJsonl(dir: string): unknown[] {
  const out: unknown[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".jsonl")) continue;
    const text = readFileSync(join(dir, name), "utf8");
    let start = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
      out.push(JSON.parse(text.slice(start, end)));
      start = end + 1;
    }
  }
  return out;
}

type OpenDatabase = (path: string) => Database;

/** The raw SQLite reader: open the file and SELECT every row of every table. */
function readSqlite(open: OpenDatabase, path: string): { db: Database; rows: unknown[] } {
  const db = open(path);
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  const rows: unknown[] = [];
  for (const table of tables)
    for (const row of db.prepare(`SELECT * FROM "${table}"`).iterate()) rows.push(row);
  return { db, rows };
}

async function main(): Promise<void> {
  const [backend, reader, path] = process.argv.slice(2);
  if (
    (backend !== "jsonl" && backend !== "sqlite") ||
    (reader !== "durably" && reader !== "raw") ||
    !path
  )
    throw new TypeError(
      `usage: reopen-child <jsonl|sqlite> <durably|raw> <path>, got ${process.argv.slice(2).join(" ")}`,
    );
  // Load only what this reader needs, before the clock starts: module loading is not reopen.
  const durably =
    reader === "durably"
      ? {
          Session: (await import("@durably/core")).Session,
          open:
            backend === "jsonl"
              ? (await import("@durably/storage-jsonl")).openJsonlStorage
              : (await import("@durably/storage-sqlite")).openSqliteStorage,
        }
      : undefined;
  const openDatabase: OpenDatabase | undefined =
    reader === "raw" && backend === "sqlite" ? (await import("better-sqlite3")).default : undefined;
  gc();
  const rssBefore = process.memoryUsage().rss;
  let items = 0;
  let close: () => Promise<void> | void;
  const start = performance.now();
  if (durably) {
    const session = await durably.Session.open(await durably.open(path));
    close = () => session.close();
  } else if (openDatabase) {
    const { db, rows } = readSqlite(openDatabase, path);
    items = rows.length;
    close = () => void (rows.length, db.close());
  } else {
    const lines = readJsonl(path);
    items = lines.length;
    close = () => void lines.length;
  }
  const ms = performance.now() - start;
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  await close();
  const report: ChildReport = { ms, rssBefore, rss, heapUsed, items };
  process.stdout.write(JSON.stringify(report) + "\n");
}

await main();
