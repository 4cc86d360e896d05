import { StorageCorrupted } from "@durably/core";
import { typedDriverError } from "./driver-errors.js";
import type { SqliteDatabase } from "./sqlite-database.js";

/**
 * How much of the file's structure open verifies before anything is read:
 * `"quick"` (default) runs `PRAGMA quick_check`, `"full"` runs
 * `PRAGMA integrity_check` (which also compares every index with its table),
 * `"none"` skips the check.
 */
export type OpenCheck = "quick" | "full" | "none";

export const OPEN_CHECKS: readonly OpenCheck[] = ["quick", "full", "none"];

/** SQLite stops after this many problems; the first few are enough to name the damage. */
const MAX_PROBLEMS = 20;
/** Problems quoted in the error message. */
const QUOTED = 5;

/**
 * Verifies the b-trees of the whole file (the database as the write-ahead
 * log leaves it) before open trusts any of it. Row checksums catch a row
 * whose bytes changed, but not a row the b-tree no longer returns: one
 * damaged byte in a page header (a cell count) silently drops rows from the
 * middle of a table or index. SQLite's check reads every page and catches
 * that (cells the page no longer accounts for, an index with fewer entries
 * than its table); it is reported as `StorageCorrupted` naming the file, the
 * tables SQLite's report points at and what SQLite said.
 */
export async function checkStructure(
  db: SqliteDatabase,
  location: string,
  check: OpenCheck,
): Promise<void> {
  if (check === "none") return;
  const pragma = check === "full" ? "integrity_check" : "quick_check";
  const action = `checking the file's structure at open (PRAGMA ${pragma})`;
  let problems: string[];
  try {
    const rows = await db.all<Record<string, unknown>>(`PRAGMA ${pragma}(${MAX_PROBLEMS})`);
    problems = rows.flatMap((row) =>
      String(Object.values(row)[0])
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("*** in database")),
    );
  } catch (error) {
    throw typedDriverError(error, location, action);
  }
  if (problems.length === 1 && problems[0] === "ok") return;
  const tables = await tablesNamed(db, problems);
  const quoted = problems.slice(0, QUOTED).join("; ");
  const more = problems.length > QUOTED ? ` (and ${problems.length - QUOTED} more)` : "";
  throw new StorageCorrupted(
    `${location}: the file is damaged: SQLite's ${pragma} at open reported ${quoted}${more}${
      tables.length > 0 ? ` (in ${tables.join(", ")})` : ""
    }`,
    { file: location, ...(tables.length === 1 ? { table: tables[0] } : {}) },
  );
}

/**
 * The tables and indexes SQLite's report points at: by name ("wrong # of
 * entries in index x"), by root page ("Tree 12 page 34 ..."), or by page
 * through the `dbstat` view where the driver has it. Best effort: a file
 * damaged enough to fail these lookups is reported without names.
 */
async function tablesNamed(db: SqliteDatabase, problems: readonly string[]): Promise<string[]> {
  const names = new Set<string>();
  const pages = new Set<number>();
  for (const problem of problems) {
    const index = /in index (\S+)/.exec(problem);
    if (index) names.add(index[1] as string);
    const tree = /Tree (\d+)/.exec(problem);
    if (tree) pages.add(Number(tree[1]));
    else for (const m of problem.matchAll(/page (\d+)/g)) pages.add(Number(m[1]));
  }
  for (const page of [...pages].slice(0, QUOTED)) {
    try {
      const root = await db.all<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE rootpage = ?",
        [page],
      );
      const owner =
        root.length > 0
          ? root
          : await db.all<{ name: string }>("SELECT name FROM dbstat WHERE pageno = ?", [page]);
      for (const { name } of owner) names.add(name);
    } catch {
      // No dbstat in this driver, or the damage stops the lookup: the report stands without names.
    }
  }
  return [...names];
}
