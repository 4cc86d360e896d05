import type { Storage } from "@durably/core";
import { CrashChild, moduleUrl } from "./child-process.js";
import { check, CrashCheckFailed, describeError, withReplay } from "./failure.js";
import { Ledger } from "./ledger.js";
import type { LedgerStats } from "./ledger.js";
import { commitOwnStep } from "./own-commit.js";
import type { Prng } from "./prng.js";
import { sleep, withTempStorage } from "./temp-storage.js";
import type { CrashConformanceOptions } from "./types.js";
import { setUpCommitters } from "./workload.js";

/** Generous: a loaded 2-core box may take seconds to start node with a TypeScript loader. */
const CHILD_TIMEOUT_MS = 30_000;

/** When, in one child's life, the SIGKILL lands. */
export type KillPlan =
  /** Counted from spawn, so it may land while the child opens and recovers the storage. */
  | { kind: "while-opening"; afterMs: number }
  /** Right after the child reported `acks` acknowledged commits (then `thenMs`, 0 = next tick): mid-commit. */
  | { kind: "after-acks"; acks: number; thenMs: number }
  /** At a random moment after the child is ready. */
  | { kind: "after-ready"; afterMs: number };

export interface KillLoopSummary extends LedgerStats {
  kills: number;
  killsWhileOpening: number;
  iterations: number;
  committers: number;
  seed: number;
  elapsedMs: number;
  /** Mean time from spawn until the child's Session was open. */
  meanReadyMs: number;
}

export function planKill(prng: Prng, committers: number, readyMs: number): KillPlan {
  const roll = prng.next();
  // Late in the start-up, where the child recovers the storage and opens its Session.
  if (roll < 0.1) {
    const afterMs = prng.int(Math.round(readyMs * 0.5), Math.max(1, Math.round(readyMs * 1.2)));
    return { kind: "while-opening", afterMs };
  }
  if (roll < 0.6)
    return { kind: "after-acks", acks: prng.int(1, 20 * committers), thenMs: prng.int(0, 3) };
  return { kind: "after-ready", afterMs: prng.int(0, 60) };
}

async function runPlan(child: CrashChild, plan: KillPlan): Promise<void> {
  switch (plan.kind) {
    case "while-opening":
      await sleep(plan.afterMs);
      return;
    case "after-acks":
      await child.ready(CHILD_TIMEOUT_MS);
      await child.until(
        `${plan.acks} acknowledged commits`,
        () => child.acks.length >= plan.acks,
        CHILD_TIMEOUT_MS,
      );
      await sleep(plan.thenMs);
      return;
    case "after-ready":
      await child.ready(CHILD_TIMEOUT_MS);
      await sleep(plan.afterMs);
      return;
  }
}

export interface KillLoopConfig {
  name: string;
  options: CrashConformanceOptions;
  committers: number;
  iterations: number;
  seed: number;
  prng: Prng;
  /** Called every tenth of the run with a progress line (long soak runs). */
  progress?: (line: string) => void;
}

/**
 * The kill loop: one storage, `iterations` children, each committing until a
 * SIGKILL at a moment the plan picks; after each kill the parent reopens,
 * verifies, commits once itself and closes; the next child continues.
 */
export async function runKillLoop(config: KillLoopConfig): Promise<KillLoopSummary> {
  const { options, committers, iterations, seed, prng } = config;
  const started = Date.now();
  const summary: Omit<KillLoopSummary, keyof LedgerStats> = {
    kills: 0,
    killsWhileOpening: 0,
    iterations,
    committers,
    seed,
    elapsedMs: 0,
    meanReadyMs: 0,
  };
  let readyTotal = 0;
  let readyCount = 0;
  return withTempStorage(async (path) => {
    const ids = await setUpCommitters(await options.open(path), committers);
    const ledger = new Ledger(ids);
    let readyMs = 300;
    let child: CrashChild | undefined;
    let storage: Storage | undefined;
    try {
      for (let iteration = 1; iteration <= iterations; iteration++) {
        const plan = planKill(prng, committers, readyMs);
        try {
          const spawned = Date.now();
          child = new CrashChild(
            { childModule: moduleUrl(options.childModule), path, committers: ids, mode: "loop" },
            options.nodeArgs ?? [],
          );
          await runPlan(child, plan);
          if (child.nextSteps !== undefined && child.readyAt !== undefined) {
            const took = child.readyAt - spawned;
            readyMs = (readyMs * 3 + took) / 4;
            readyTotal += took;
            readyCount++;
          }
          const exit = await child.kill();
          summary.kills++;
          if (child.nextSteps === undefined) summary.killsWhileOpening++;
          if (child.failure !== undefined)
            throw new CrashCheckFailed(
              "the storage keeps working after a crash",
              `the child failed before the kill: ${child.failure}`,
            );
          check(
            exit.signal === "SIGKILL",
            "harness",
            () =>
              `the child ended on its own (code ${exit.code}, signal ${exit.signal}) before the kill; stderr:\n${child?.stderrTail ?? ""}`,
          );
          const report = { acks: child.acks, intents: child.intents, nextSteps: child.nextSteps };
          child = undefined;

          try {
            storage = await options.open(path);
          } catch (error) {
            throw new CrashCheckFailed(
              "the storage keeps working after a crash",
              `reopen after SIGKILL rejected: ${describeError(error)}`,
              { cause: error },
            );
          }
          await ledger.verify(storage, report);
          const committer = (iteration - 1) % committers;
          const state = ledger.committers[committer];
          if (state === undefined) throw new RangeError(`no committer ${committer}`);
          const own = storage;
          storage = undefined; // commitOwnStep closes it
          ledger.adoptOwnCommit(await commitOwnStep(own, state.ids, committer, state.top.step + 1));
          if (
            config.progress !== undefined &&
            iteration % Math.max(1, Math.floor(iterations / 10)) === 0
          )
            config.progress(
              `${iteration}/${iterations} iterations, ${ledger.stats.verifiedCommits} commits verified`,
            );
        } catch (error) {
          throw withReplay(
            error,
            `at iteration ${iteration} of ${iterations} (kill plan ${JSON.stringify(plan)}, ${committers} committer(s)); replay with CRASH_SEED=${seed}`,
          );
        }
      }
      storage = await options.open(path);
      try {
        await ledger.verifyWholeHistory(storage);
      } catch (error) {
        throw withReplay(
          error,
          `after the last of ${iterations} iterations; replay with CRASH_SEED=${seed}`,
        );
      }
    } finally {
      if (child !== undefined) await child.kill();
      if (storage !== undefined) await storage.close();
    }
    summary.elapsedMs = Date.now() - started;
    summary.meanReadyMs = readyCount === 0 ? 0 : Math.round(readyTotal / readyCount);
    return { ...summary, ...ledger.stats };
  });
}

export function formatSummary(name: string, summary: KillLoopSummary): string {
  return (
    `crash conformance ${name}, ${summary.committers} committer(s): ${summary.kills} SIGKILLs ` +
    `(${summary.killsWhileOpening} while opening), ${summary.acknowledged} acknowledged commits all found, ` +
    `${summary.storedUnacknowledged} stored before their acknowledgement, ${summary.lost} lost unacknowledged, ` +
    `${summary.verifiedCommits} commits verified, ${(summary.elapsedMs / 1000).toFixed(1)} s ` +
    `(child start ${summary.meanReadyMs} ms on average), seed ${summary.seed}`
  );
}
