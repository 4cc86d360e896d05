import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exerciseAccessPaths } from "@durably/contract-tests";
import { BetterSqlite3Database, REVISION_ROWS_SQL, SqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { RecordingDatabase } from "./recording-database.js";

/** Tables that grow with use; a full scan of any of them is a bug. */
const GROWING = [
  "conversations",
  "entries",
  "tasks",
  "submissions",
  "documents",
  "document_revisions",
  "tips",
];

/**
 * What schema version 5 removed: the statements of the earlier migrations
 * that name them (run once per file, inside its migration, on an empty or
 * old file) cannot be planned against the current schema, and only they.
 */
const REMOVED_BY_MIGRATIONS = /no such (table: (entry_tips|metadata)|column: last_seq)/;

let dir: ReturnType<typeof tempDir>;
let recording: RecordingDatabase;
let storage: SqliteStorage;

beforeAll(async () => {
  dir = tempDir();
  const path = join(dir.dir, "plan.sqlite");
  recording = new RecordingDatabase(BetterSqlite3Database.open(path));
  storage = await SqliteStorage.open(recording, { location: path });
  // Every write path (records of each table, documents created, copied, changed, retired), then every read path.
  await exerciseAccessPaths(storage);
});

afterAll(async () => {
  await storage.close();
  dir.cleanup();
});

async function fullScans(
  sql: string,
  params: readonly (string | number | null)[],
): Promise<string[]> {
  let plan: { detail: string }[];
  try {
    plan = await recording.inner.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
  } catch (error) {
    if (REMOVED_BY_MIGRATIONS.test(String(error))) return [];
    throw error;
  }
  return plan
    .filter(({ detail }) => {
      const scan = /^SCAN (\w+)/.exec(detail);
      return (scan !== null && GROWING.includes(scan[1] as string)) || /TEMP B-TREE/.test(detail);
    })
    .map(({ detail }) => `${detail}\n    in: ${sql}`);
}

describe("EXPLAIN QUERY PLAN", () => {
  it("the check itself flags a full scan (the demo's whole-table listing is one, on purpose)", async () => {
    expect((await fullScans(REVISION_ROWS_SQL, [])).length).toBeGreaterThan(0);
  });

  it("every statement the storage runs reads growing tables by index range, never a full scan or a sort", async () => {
    const distinct = new Map<string, (typeof recording.statements)[number]>();
    for (const s of recording.statements)
      if (/^\s*(SELECT|INSERT|UPDATE|DELETE)\b/i.test(s.sql)) distinct.set(s.sql, s);
    expect(distinct.size).toBeGreaterThan(40);
    const offenders: string[] = [];
    for (const { sql, params } of distinct.values())
      offenders.push(...(await fullScans(sql, params)));
    if (process.env.DURABLY_SHOW_PLANS)
      for (const { sql, params } of distinct.values())
        console.log(
          sql,
          (await recording.inner.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map(
            (p) => p.detail,
          ),
        );
    expect(offenders).toEqual([]);
  });
});
