import { median } from "./stats.js";

/** An opened benchmark case: runs commits until a deadline. */
export interface Runner {
  /** Runs until `performance.now()` passes `deadline`; returns the commits completed. */
  run(deadline: number): Promise<number>;
  /** Untimed, before each round (`localRounds`): a case that starts every round afresh does it here. */
  beforeRound?(): Promise<void>;
  /** Storage calls and batches so far (Session cases): how well group commit grouped. */
  stats?(): { calls: number; batches: number };
  close(): Promise<void> | void;
}

export type CaseFamily = "session" | "direct" | "raw" | "peer";

export interface CommitCase {
  /** Stable key, e.g. `session/sqlite/64`; tables, goals and charts refer to cases by it. */
  id: string;
  family: CaseFamily;
  label: string;
  backend: string;
  writers: number;
  open(): Promise<Runner>;
}

export interface CaseResult {
  id: string;
  family: CaseFamily;
  label: string;
  backend: string;
  writers: number;
  /** Median commits/s over the rounds. */
  perSecond: number;
  /** Commits/s of each round, in round order. */
  rounds: number[];
  /**
   * Median over the rounds of the process's CPU time (user + system, every
   * thread) per commit, in microseconds. A shared machine stretches wall
   * time; CPU time per commit moves far less, so the session's own cost is
   * read from it (see `CommitPair.kernelMicros`).
   */
  cpuMicros: number;
  commits: number;
  /** Batches per storage call over the timed rounds (Session cases only). */
  batchesPerCall?: number;
}

/**
 * `writers` loops, each awaiting `step` until the deadline (checked before each step):
 * concurrency the way an application has it, each writer waiting for its own commit.
 */
export async function concurrentLoops(
  writers: number,
  deadline: number,
  step: (writer: number) => Promise<void> | void,
  commitsPerStep = 1,
): Promise<number> {
  let commits = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      while (performance.now() < deadline) {
        await step(writer);
        commits += commitsPerStep;
      }
    }),
  );
  return commits;
}

export interface MeasureOptions {
  rounds: number;
  roundMs: number;
  warmupMs: number;
  /**
   * Untimed run of a case right before each of its rounds (default 0). A
   * case waits through every other case's round between two of its own;
   * after such a wait its first fraction of a second ran slower (measured:
   * apps/bench README, "Method").
   */
  roundWarmupMs?: number;
  log?: (line: string) => void;
}

/** One timed run of a case, measured where it ran. */
export interface RoundResult {
  commits: number;
  seconds: number;
  /** CPU time (user + system, every thread) of the process that ran it, in microseconds. */
  cpuMicros: number;
}

/** A case ready to run rounds: in this process (`localRounds`) or in a child (`isolated.ts`). */
export interface RoundRunner {
  /** Runs `warmupMs` untimed (after the case's `beforeRound`), then a timed round of `ms`. */
  round(ms: number, warmupMs?: number): Promise<RoundResult>;
  stats(): Promise<{ calls: number; batches: number } | undefined>;
  close(): Promise<void>;
}

/** Runs an opened case's rounds in this process, timing each with this process's clock and CPU. */
export function localRounds(runner: Runner): RoundRunner {
  return {
    async round(ms, warmupMs = 0) {
      await runner.beforeRound?.();
      if (warmupMs > 0) await runner.run(performance.now() + warmupMs);
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      const commits = await runner.run(start + ms);
      const seconds = (performance.now() - start) / 1000;
      const cpu = process.cpuUsage(cpuStart);
      return { commits, seconds, cpuMicros: cpu.user + cpu.system };
    },
    stats: () => Promise.resolve(runner.stats?.()),
    close: async () => {
      await runner.close();
    },
  };
}

/**
 * Opens every case in this process and measures them (`measureRounds`).
 * Cases sharing one process share the JIT's feedback on library code they
 * both call (abstract-level's `batch`, better-sqlite3's statements): one
 * case's calls can make another's faster or slower than in a process of its
 * own, so the benchmarks that compare cases use `measureIsolated`.
 */
export async function measureInterleaved(
  cases: readonly CommitCase[],
  options: MeasureOptions,
): Promise<CaseResult[]> {
  return measureRounds(cases, (c) => c.open().then(localRounds), options);
}

/**
 * Opens every case (`open`), warms each, then runs `rounds` rounds in which
 * every case runs `roundMs` in turn (the starting case rotates each round).
 * On a shared machine a burst of load then hits one round of every case
 * instead of all of one case, and the median per case discards it.
 */
export async function measureRounds(
  cases: readonly CommitCase[],
  open: (c: CommitCase, index: number) => Promise<RoundRunner>,
  options: MeasureOptions,
): Promise<CaseResult[]> {
  const runners: RoundRunner[] = [];
  try {
    for (let i = 0; i < cases.length; i++) runners.push(await open(cases[i] as CommitCase, i));
    for (const runner of runners) await runner.round(options.warmupMs);
    const before = await Promise.all(runners.map((r) => r.stats()));
    const rates = cases.map(() => [] as number[]);
    const cpus = cases.map(() => [] as number[]);
    const totals = cases.map(() => 0);
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < cases.length; k++) {
        const i = (k + round) % cases.length;
        const { commits, seconds, cpuMicros } = await (runners[i] as RoundRunner).round(
          options.roundMs,
          options.roundWarmupMs,
        );
        (rates[i] as number[]).push(commits / seconds);
        (cpus[i] as number[]).push(commits > 0 ? cpuMicros / commits : Number.NaN);
        totals[i] = (totals[i] as number) + commits;
      }
      options.log?.(`  round ${round + 1}/${options.rounds} done`);
    }
    const after = await Promise.all(runners.map((r) => r.stats()));
    return cases.map((c, i) => {
      const result: CaseResult = {
        id: c.id,
        family: c.family,
        label: c.label,
        backend: c.backend,
        writers: c.writers,
        perSecond: median(rates[i] as number[]),
        rounds: rates[i] as number[],
        cpuMicros: median(cpus[i] as number[]),
        commits: totals[i] as number,
      };
      const start = before[i];
      const end = after[i];
      if (start && end && end.calls > start.calls)
        result.batchesPerCall = (end.batches - start.batches) / (end.calls - start.calls);
      return result;
    });
  } finally {
    for (const runner of runners) await runner.close();
  }
}
