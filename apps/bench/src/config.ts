import { scriptFlags } from "./script-flags.js";

/** How big a run is. The full run is what the README quotes; smoke only proves the bench works. */
export interface BenchConfig {
  smoke: boolean;
  /** Where `*.json` and `*.svg` go (default: `<repo>/bench-results`). */
  outDir: string;
  /** Interleaved rounds per commit case; the median counts. */
  rounds: number;
  /** Length of one round of one case. */
  roundMs: number;
  /** Untimed run of each case before its first round (JIT, file creation, page cache). */
  warmupMs: number;
  /** Untimed run of each case right before each of its rounds (see `MeasureOptions.roundWarmupMs`). */
  roundWarmupMs: number;
  /** Concurrent writers of the "many writers" cases. */
  writers: number;
  /** Steps of the growing conversation. */
  growingSteps: number;
  /** Bytes of one message of the growing conversation, as JSON. */
  messageBytes: number;
  /** Log sizes (commits) for the reopen family. */
  reopenSizes: number[];
  /** Fresh child processes per (backend, size, reader); the median counts. */
  reopenRounds: number;
}

const FULL: Omit<BenchConfig, "smoke" | "outDir"> = {
  rounds: 5,
  roundMs: 800,
  // Each case runs in a process of its own, whose JIT learns only from its own calls: the
  // store's Session case took about a second to reach its steady rate (measured).
  warmupMs: 1000,
  // A case process idle for the other cases' rounds (about 30 s) ran its next round's first
  // part slower: JSONL with 64 writers 25,000 to 41,000 commits/s against 45,000 to 66,000 (measured).
  roundWarmupMs: 200,
  writers: 64,
  growingSteps: 2000,
  messageBytes: 300,
  reopenSizes: [1_000, 10_000, 100_000],
  reopenRounds: 3,
};

const SMOKE: Omit<BenchConfig, "smoke" | "outDir"> = {
  rounds: 2,
  roundMs: 30,
  warmupMs: 5,
  roundWarmupMs: 5,
  writers: 8,
  growingSteps: 40,
  messageBytes: 300,
  reopenSizes: [60, 120],
  reopenRounds: 1,
};

/** `--smoke` or `BENCH_SMOKE=1` for tiny counts; `--out <dir>` or `BENCH_OUT` for the output directory. */
export function configFrom(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): BenchConfig {
  const { smoke, outDir } = scriptFlags(argv, env);
  return { smoke, outDir, ...(smoke ? SMOKE : FULL) };
}
