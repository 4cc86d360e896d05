import { copyFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll } from "vitest";
import { openSqliteStorage } from "../../src/index.js";
import { tempDir } from "../helpers.js";
import { LEGACY_COMMITS, LEGACY_FORK_AT } from "./legacy-file.js";
import { writeLedger, type Ledger } from "./ledger.js";

/** A file an older release wrote (see test/fixtures/README.md), with what it holds. */
export interface LegacyFixture {
  /** The fixture itself: read it, never write it. */
  readonly path: string;
  /** What the fixture holds: the ledger workload written again by this release. */
  readonly ledger: Ledger;
  /** A fresh copy of the fixture to open, migrate or damage. */
  copy(): string;
}

/**
 * Registers the hooks of a test file that opens copies of `test/fixtures/<name>`:
 * a scratch directory, and the ledger (the workload is deterministic, fixed ids
 * and seqs from 1, so writing it again gives what the fixture holds).
 */
export function useLegacyFixture(name: string): LegacyFixture {
  const path = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  let dir: ReturnType<typeof tempDir> | undefined;
  let ledger: Ledger | undefined;
  let n = 0;
  beforeAll(async () => {
    dir = tempDir(`durably-sqlite-${name}-`);
    const scratch = await openSqliteStorage(join(dir.dir, "scratch.sqlite"));
    ledger = await writeLedger(scratch, LEGACY_COMMITS, LEGACY_FORK_AT);
    await scratch.close();
  });
  afterAll(() => dir?.cleanup());
  return {
    path,
    get ledger() {
      if (ledger === undefined) throw new Error("the fixture's ledger is written in beforeAll");
      return ledger;
    },
    copy() {
      if (dir === undefined) throw new Error("copies are made after beforeAll");
      const copy = join(dir.dir, `${n++}-${name}`);
      copyFileSync(path, copy);
      return copy;
    },
  };
}

/** Runs `read` on a raw better-sqlite3 connection to `path`, closed afterwards. */
export function withRaw<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path);
  try {
    return read(db);
  } finally {
    db.close();
  }
}
