import { readFileSync, rmSync, truncateSync } from "node:fs";
import { basename, join } from "node:path";
import { ClassicLevel } from "classic-level";
import { Prng } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { tempDir } from "./backends.js";
import {
  damage,
  largest,
  openOnce,
  reopenAndRead,
  restore,
  snapshot,
  writeCommits,
  type Damage,
  type Outcome,
} from "./level-files.js";

/**
 * Real LevelDB files damaged the way a crash or a bad disk damages them.
 * LevelDB's own recovery skips a damaged log record and keeps the records
 * after it (a hole), and reads tables without checking their sums; every
 * reopen here must give StorageCorrupted or a prefix of the commits.
 */

const N = 250;
const SEED = Number(process.env.DURABLY_DAMAGE_SEED ?? 20250616);
/** Seeded damages per file kind and damage kind; `DAMAGE_TRIALS` raises it for a soak. */
const TRIALS = Number(process.env.DAMAGE_TRIALS ?? 12);

async function withCommits(
  options: { compact: boolean },
  run: (location: string) => Promise<void>,
): Promise<void> {
  const dir = tempDir();
  const location = join(dir, "db");
  try {
    await writeCommits(location, N, options);
    await run(location);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function corrupted(outcome: Outcome): StorageCorrupted {
  expect("error" in outcome, `expected StorageCorrupted, got ${JSON.stringify(outcome)}`).toBe(
    true,
  );
  const error = (outcome as { error: unknown }).error;
  expect(error).toBeInstanceOf(StorageCorrupted);
  return error as StorageCorrupted;
}

describe("StoreStorage on classic-level > a damaged write-ahead log", () => {
  for (const kind of ["flip", "zero-4k"] as const) {
    it(`${kind === "flip" ? "one flipped byte" : "a zeroed 4 KiB block"} in the middle of the log: open fails with StorageCorrupted naming the log file, and every file stays as it was`, async () => {
      await withCommits({ compact: false }, async (location) => {
        const log = largest(location, ".log");
        damage(log, kind, Math.floor(readFileSync(log).length / 2), 3);
        const before = snapshot(location);
        const error = corrupted(await reopenAndRead(location, N));
        expect(error.location.file).toBe(log);
        expect(error.message).toMatch(/write-ahead log record at byte \d+ is damaged/);
        expect(error.message).toMatch(/\d+ write\(s\) after it are intact/);
        // The log is kept as evidence: LevelDB never replayed (and deleted) it.
        expect(snapshot(location)).toEqual(before);
      });
    });
  }

  it("a log cut inside its last record (a torn write) opens with every commit before it", async () => {
    await withCommits({ compact: false }, async (location) => {
      const log = largest(location, ".log");
      truncateSync(log, readFileSync(log).length - 40);
      expect(await reopenAndRead(location, N)).toEqual({ prefix: N - 1 });
    });
  });

  it("when LevelDB's own recovery already dropped writes from the middle, the commit chain reports the missing seqs", async () => {
    await withCommits({ compact: false }, async (location) => {
      const log = largest(location, ".log");
      damage(log, "flip", Math.floor(readFileSync(log).length / 2), 5);
      // Opened once without Durably: LevelDB replays around the damage and deletes the log.
      const raw = new ClassicLevel(location);
      await raw.open();
      await raw.close();
      const error = corrupted(await reopenAndRead(location, N));
      expect(error.message).toMatch(/commit chain: the writes of seqs \d+ to \d+ are missing/);
      expect(error.location.key).toMatch(/^l\/\d{16}$/);
      expect(error.location.seq).toBeGreaterThan(1);
      expect(error.location.seq).toBeLessThan(N);
      // Still reported at the next open: nothing was written in between.
      corrupted(await reopenAndRead(location, N));
    });
  });
});

/** Damages `file` at seeded positions, reopening from the same snapshot each time; every outcome must be StorageCorrupted or a prefix. */
async function seeded(location: string, ext: string, kind: Damage, seed: number): Promise<void> {
  const pristine = snapshot(location);
  const random = new Prng(seed);
  const tally = { corrupted: 0, prefix: 0 };
  for (let trial = 0; trial < TRIALS; trial++) {
    restore(location, pristine);
    const file = largest(location, ext);
    const at = Math.floor(random.next() * readFileSync(file).length);
    const what = damage(file, kind, at, Math.floor(random.next() * 8));
    const where = `seed ${seed}, trial ${trial}: ${basename(file)} ${what}`;
    let outcome: Outcome;
    try {
      outcome = await reopenAndRead(location, N);
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}`, { cause: error });
    }
    if ("prefix" in outcome) tally.prefix++;
    else {
      expect(outcome.error, `${where}: ${String(outcome.error)}`).toBeInstanceOf(StorageCorrupted);
      tally.corrupted++;
    }
  }
  console.info(
    `${ext} ${kind}, seed ${seed}: ${tally.corrupted} StorageCorrupted, ${tally.prefix} prefix`,
  );
}

describe("StoreStorage on classic-level > seeded damage to real LevelDB files", () => {
  for (const [ext, compact] of [
    [".log", false],
    [".ldb", true],
  ] as const)
    for (const kind of ["flip", "zero-4k"] as const)
      it(`${TRIALS} ${kind === "flip" ? "flipped bits" : "zeroed 4 KiB blocks"} at seeded positions of the ${ext} file: every reopen gives StorageCorrupted or a prefix, never a hole or half a commit`, async () => {
        await withCommits({ compact }, async (location) => {
          if (compact) await openOnce(location);
          await seeded(location, ext, kind, SEED + ext.length * 7 + kind.length);
        });
      }, 120_000);
});
