import type { CaseResult } from "./harness.js";
import type { GrowingResult } from "./peer-langgraph.js";
import type { ReopenResult } from "./reopen.js";

/** Everything one run measured; written as JSON and rendered as tables and charts. */
export interface BenchReport {
  meta: RunMeta;
  commits: { cases: CaseResult[]; pairs: CommitPair[] };
  growing: GrowingResult;
  reopen: ReopenResult;
  goals: Goal[];
}

export interface RunMeta {
  startedAt: string;
  finishedAt: string;
  smoke: boolean;
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  /** os.loadavg() when the run started and ended: the machine is shared. */
  loadavgStart: number[];
  loadavgEnd: number[];
  rounds: number;
  roundMs: number;
  /** Untimed run of each case before each of its rounds. */
  roundWarmupMs?: number;
  writers: number;
  reopenRounds: number;
}

/** A measured case next to the baseline it is judged against, in the same run. */
export interface CommitPair {
  caseId: string;
  baselineId: string;
  perSecond: number;
  baselinePerSecond: number;
  ratio: number;
  /** CPU microseconds per commit of the case and of its baseline (medians over the rounds). */
  cpuMicros: number;
  baselineCpuMicros: number;
  /**
   * Session cases: the kernel's own CPU per commit, the case's CPU per commit
   * minus that of `storage.commit` called directly with the same batches
   * (`direct/…`; for memory, the raw `MemoryStorage.commit` case).
   */
  kernelMicros?: number;
}

export interface Goal {
  id: string;
  description: string;
  /** A ratio ("x", the default) or microseconds ("µs"). */
  unit?: "x" | "µs";
  value: number;
  comparator: ">=" | "<=";
  target: number;
  met: boolean;
}
