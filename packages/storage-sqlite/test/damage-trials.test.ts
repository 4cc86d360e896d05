import { copyFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { openSqliteStorage, type OpenCheck, type SqliteStorage } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { allLeaves, flipBit, leafPages, lowerCellCount } from "./support/btree.js";
import { verifyLedger, writeLedger, type Ledger } from "./support/ledger.js";

/**
 * Seeded random damage to a real file after a clean close: one flipped bit
 * anywhere, or one leaf page of a b-tree losing cells. Every trial must end
 * with the open or a read failing with `StorageCorrupted`, or with every
 * read returning exactly what was written; never a hole, never an older
 * value. `DURABLY_DAMAGE_SEED` replays a run, `DURABLY_DAMAGE_TRIALS` soaks
 * (per kind; default 24).
 */
const SEED = Number(process.env.DURABLY_DAMAGE_SEED ?? Date.now() % 2 ** 31);
const TRIALS = Number(process.env.DURABLY_DAMAGE_TRIALS ?? 24);
/** The b-trees the chains cover, so a read finds what a damaged page of them dropped even unchecked. */
/** Each trial copies, opens and reads the whole file back: well under half a second. */
const TIMEOUT = 30_000 + TRIALS * 500;
const CHAINED = ["entries", "entries_by_conversation", "entries_heads", "document_revisions"];

let seed = SEED >>> 0 || 1;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

let dir: ReturnType<typeof tempDir>;
let pristine: string;
let ledger: Ledger;

beforeAll(async () => {
  dir = tempDir("durably-sqlite-damage-");
  pristine = join(dir.dir, "pristine.sqlite");
  const storage = await openSqliteStorage(pristine);
  ledger = await writeLedger(storage);
  await storage.close();
});
afterAll(() => dir.cleanup());

type Outcome = "open refused" | "read refused" | "exact";

/** Damages a copy with `damage`, opens it with `check` and reads everything back. */
async function trial(
  n: number,
  check: OpenCheck,
  damage: (path: string) => string,
): Promise<{ outcome: Outcome; what: string }> {
  const path = join(dir.dir, `trial-${n}.sqlite`);
  copyFileSync(pristine, path);
  const what = damage(path);
  let storage: SqliteStorage | undefined;
  try {
    try {
      storage = await openSqliteStorage(path, { openCheck: check });
    } catch (error) {
      if (!(error instanceof StorageCorrupted))
        throw new Error(`${what}: open failed with ${String(error)}, not StorageCorrupted`, {
          cause: error,
        });
      expect(error.location.file, what).toBe(path);
      return { outcome: "open refused", what };
    }
    let problems: string[];
    try {
      problems = await verifyLedger(storage, ledger);
    } catch (error) {
      if (!(error instanceof StorageCorrupted))
        throw new Error(`${what}: a read failed with ${String(error)}, not StorageCorrupted`, {
          cause: error,
        });
      expect(error.location.file, what).toBe(path);
      return { outcome: "read refused", what };
    }
    expect(problems, `${what}: silent difference (seed ${SEED})`).toEqual([]);
    return { outcome: "exact", what };
  } finally {
    await storage?.close().catch(() => undefined);
    rmSync(path, { force: true });
  }
}

function tally(kind: string, outcomes: Outcome[]): void {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  console.log(
    `sqlite damage trials, ${kind}: ${JSON.stringify(counts)} (seed ${SEED}, ${TRIALS} trials)`,
  );
}

describe(`seeded random damage after a clean close (seed ${SEED}, ${TRIALS} trials per kind)`, () => {
  it(
    "a bit flipped anywhere in the file: the open or a read fails with StorageCorrupted, or everything reads back exactly",
    async () => {
      const size = statSync(pristine).size;
      const outcomes: Outcome[] = [];
      for (let n = 0; n < TRIALS; n++) {
        const offset = Math.floor(random() * size);
        const bit = Math.floor(random() * 8);
        const { outcome } = await trial(n, "quick", (path) => {
          flipBit(path, offset, bit);
          return `bit ${bit} of byte ${offset} flipped`;
        });
        outcomes.push(outcome);
      }
      tally("one flipped bit, default open check", outcomes);
    },
    TIMEOUT,
  );

  it(
    "a leaf page of any table or index losing cells: the default open check refuses the file",
    async () => {
      const trees = allLeaves(pristine);
      const { pageSize } = leafPages(pristine, "entries");
      const outcomes: Outcome[] = [];
      for (let n = 0; n < TRIALS; n++) {
        const tree = pick(trees);
        const page = pick(tree.leaves);
        const by = 1 + Math.floor(random() * 3);
        const { outcome, what } = await trial(n, "quick", (path) => {
          const { before, after } = lowerCellCount(path, page, pageSize, by);
          return `${tree.name} leaf page ${page}: cell count ${before} -> ${after}`;
        });
        expect(outcome, what).toBe("open refused");
        outcomes.push(outcome);
      }
      tally("leaf cells dropped, default open check", outcomes);
    },
    TIMEOUT,
  );

  it(
    "a leaf page of the entries or revisions losing cells with the open check skipped: a read fails with StorageCorrupted, or everything reads back exactly",
    async () => {
      const trees = allLeaves(pristine).filter((t) => CHAINED.includes(t.name));
      expect(trees.map((t) => t.name).sort()).toEqual([...CHAINED].sort());
      const { pageSize } = leafPages(pristine, "entries");
      const outcomes: Outcome[] = [];
      for (let n = 0; n < TRIALS; n++) {
        const tree = pick(trees);
        const page = pick(tree.leaves);
        const by = 1 + Math.floor(random() * 3);
        const { outcome, what } = await trial(n, "none", (path) => {
          const { before, after } = lowerCellCount(path, page, pageSize, by);
          return `${tree.name} leaf page ${page}: cell count ${before} -> ${after}`;
        });
        // Every row of these b-trees is read back, so dropping any must be noticed.
        expect(outcome, what).toBe("read refused");
        outcomes.push(outcome);
      }
      tally("leaf cells dropped from the chained b-trees, open check skipped", outcomes);
    },
    TIMEOUT,
  );
});
