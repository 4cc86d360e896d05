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
}

export interface Goal {
  id: string;
  description: string;
  value: number;
  comparator: ">=" | "<=";
  target: number;
  met: boolean;
}
