import { BACKENDS } from "./backends.js";
import type { CaseResult } from "./harness.js";
import type { GrowingResult } from "./peer-langgraph.js";
import type { CommitPair, Goal } from "./report.js";
import type { ReopenResult } from "./reopen.js";
import { ratio } from "./stats.js";

/** Each Session case against the raw baseline of its backend at the same commits per call; the peer against raw SQLite. */
export function pairCases(cases: readonly CaseResult[]): CommitPair[] {
  const byId = new Map(cases.map((c) => [c.id, c]));
  const pairs: CommitPair[] = [];
  for (const c of cases) {
    const baselineId =
      c.family === "session" || c.family === "direct"
        ? `raw/${c.backend}/${c.writers}`
        : c.family === "peer"
          ? `raw/sqlite/1`
          : undefined;
    const baseline = baselineId === undefined ? undefined : byId.get(baselineId);
    if (!baseline || baselineId === undefined) continue;
    const pair: CommitPair = {
      caseId: c.id,
      baselineId,
      perSecond: c.perSecond,
      baselinePerSecond: baseline.perSecond,
      ratio: ratio(c.perSecond, baseline.perSecond),
      cpuMicros: c.cpuMicros,
      baselineCpuMicros: baseline.cpuMicros,
    };
    if (c.family === "session") {
      const direct = byId.get(`direct/${c.backend}/${c.writers}`) ?? baseline;
      pair.kernelMicros = c.cpuMicros - direct.cpuMicros;
    }
    pairs.push(pair);
  }
  // Grouped for reading: per backend and writer count, the Session case then storage.commit direct; the peer last.
  const backendRank = (id: string) => BACKENDS.findIndex((b) => b.id === byId.get(id)?.backend);
  const rank = (p: CommitPair) => {
    const c = byId.get(p.caseId) as CaseResult;
    return c.family === "peer"
      ? [1e9, c.writers, 0]
      : [backendRank(p.caseId), c.writers, c.family === "session" ? 0 : 1];
  };
  return pairs.sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return (
      (x[0] as number) - (y[0] as number) ||
      (x[1] as number) - (y[1] as number) ||
      (x[2] as number) - (y[2] as number)
    );
  });
}

function goal(
  id: string,
  description: string,
  value: number,
  comparator: ">=" | "<=",
  target: number,
  unit: "x" | "µs" = "x",
): Goal {
  const met = comparator === ">=" ? value >= target : value <= target;
  return { id, description, ...(unit === "µs" ? { unit } : {}), value, comparator, target, met };
}

/** The kernel's own CPU per commit of a Session case (see `CommitPair.kernelMicros`). */
export function kernelMicros(cases: readonly CaseResult[], caseId: string): number {
  const c = cases.find((x) => x.id === caseId);
  if (!c) throw new Error(`no case ${caseId}`);
  const direct =
    cases.find((x) => x.id === `direct/${c.backend}/${c.writers}`) ??
    cases.find((x) => x.id === `raw/${c.backend}/${c.writers}`);
  if (!direct) throw new Error(`no direct or raw case for ${caseId}`);
  return c.cpuMicros - direct.cpuMicros;
}

/**
 * The goals, computed from this run's figures only: those of issue 11
 * (throughput, growing conversation, reopen) and those of issue 21 (the
 * Session's share of the cost: ratios to the raw ceilings and to LangGraph,
 * and the kernel's CPU per commit).
 */
export function evaluateGoals(
  cases: readonly CaseResult[],
  growing: GrowingResult,
  reopen: ReopenResult,
  writers: number,
): Goal[] {
  const rate = (id: string): number => {
    const found = cases.find((c) => c.id === id);
    if (!found) throw new Error(`no case ${id}`);
    return found.perSecond;
  };
  const of = (a: string, b: string) => ratio(rate(a), rate(b));
  const w = writers;
  const jsonlRows = reopen.rows.filter((r) => r.backend === "jsonl");
  const worstJsonl = Math.max(...jsonlRows.map((r) => r.ratio));
  return [
    goal(
      "sqlite-1-vs-raw",
      "SQLite, 1 writer / raw better-sqlite3",
      of("session/sqlite/1", "raw/sqlite/1"),
      ">=",
      0.5,
    ),
    goal(
      `sqlite-${w}-vs-1`,
      `SQLite, ${w} writers / 1 writer`,
      of(`session/sqlite/${w}`, "session/sqlite/1"),
      ">=",
      3,
    ),
    goal(
      `sqlite-${w}-vs-langgraph`,
      `SQLite, ${w} writers / LangGraph SqliteSaver, ${w} writers`,
      of(`session/sqlite/${w}`, `peer/langgraph/${w}`),
      ">=",
      2,
    ),
    goal(
      "growing-speed",
      `growing conversation, steps/s over the last quarter of ${growing.steps}: Durably / LangGraph`,
      growing.speedup,
      ">=",
      50,
    ),
    goal(
      "growing-bytes",
      `growing conversation, bytes on disk (file + WAL) at ${growing.steps} steps: Durably / LangGraph`,
      growing.bytesRatio,
      "<=",
      1 / 200,
    ),
    goal(
      `jsonl-fsync-${w}-vs-1`,
      `JSONL fsync, ${w} writers / 1 writer`,
      of(`session/jsonl-fsync/${w}`, "session/jsonl-fsync/1"),
      ">=",
      10,
    ),
    goal(
      "jsonl-reopen-vs-raw",
      "JSONL reopen / raw read + JSON.parse, worst size",
      worstJsonl,
      "<=",
      2,
    ),
    goal(
      "jsonl-reopen-linear",
      "JSONL reopen ms per commit, largest size / next size down (1 = linear)",
      reopen.growth.jsonl,
      "<=",
      1.5,
    ),
    goal(
      "store-1-vs-raw",
      "store on classic-level, 1 writer / raw batch()",
      of("session/store-level/1", "raw/store-level/1"),
      ">=",
      0.5,
    ),
    goal(
      `store-${w}-vs-raw`,
      `store on classic-level, ${w} writers / raw batch() of ${w} commits`,
      of(`session/store-level/${w}`, `raw/store-level/${w}`),
      ">=",
      0.5,
    ),
    goal(
      "jsonl-1-vs-raw",
      "JSONL no fsync, 1 writer / raw fs appends",
      of("session/jsonl/1", "raw/jsonl/1"),
      ">=",
      0.4,
    ),
    ...kernelGoals(cases, w, of),
  ];
}

/** Issue 21's goals alone, from a run that has its cases (`src/kernel.bench.ts`). */
export function evaluateKernelGoals(cases: readonly CaseResult[], writers: number): Goal[] {
  const rate = (id: string): number => {
    const found = cases.find((c) => c.id === id);
    if (!found) throw new Error(`no case ${id}`);
    return found.perSecond;
  };
  return kernelGoals(cases, writers, (a, b) => ratio(rate(a), rate(b)));
}

/** Issue 21: the Session within a third of raw storage cost, ahead of LangGraph. */
function kernelGoals(
  cases: readonly CaseResult[],
  w: number,
  of: (a: string, b: string) => number,
): Goal[] {
  return [
    goal(
      "kernel-memory-1-vs-raw",
      "memory, 1 writer / raw MemoryStorage.commit",
      of("session/memory/1", "raw/memory/1"),
      ">=",
      0.6,
    ),
    goal(
      "kernel-memory-cpu",
      "memory, 1 writer: the Session's own CPU µs per commit",
      kernelMicros(cases, "session/memory/1"),
      "<=",
      5,
      "µs",
    ),
    goal(
      "kernel-sqlite-1-vs-raw",
      "SQLite NORMAL, 1 writer / raw better-sqlite3",
      of("session/sqlite/1", "raw/sqlite/1"),
      ">=",
      0.75,
    ),
    goal(
      `kernel-sqlite-${w}-vs-raw`,
      `SQLite NORMAL, ${w} writers / raw, ${w} commits per transaction`,
      of(`session/sqlite/${w}`, `raw/sqlite/${w}`),
      ">=",
      0.75,
    ),
    goal(
      "kernel-sqlite-full-1-vs-raw",
      "SQLite FULL, 1 writer / raw FULL better-sqlite3",
      of("session/sqlite-full/1", "raw/sqlite-full/1"),
      ">=",
      0.75,
    ),
    goal(
      `kernel-sqlite-full-${w}-vs-raw`,
      `SQLite FULL, ${w} writers / raw FULL, ${w} commits per transaction`,
      of(`session/sqlite-full/${w}`, `raw/sqlite-full/${w}`),
      ">=",
      0.75,
    ),
    goal(
      `kernel-jsonl-${w}-vs-raw`,
      `JSONL no fsync, ${w} writers / raw appends of ${w} commits`,
      of(`session/jsonl/${w}`, `raw/jsonl/${w}`),
      ">=",
      0.5,
    ),
    goal(
      `kernel-store-${w}-vs-raw`,
      `store on classic-level, ${w} writers / raw batch() of ${w} commits`,
      of(`session/store-level/${w}`, `raw/store-level/${w}`),
      ">=",
      0.6,
    ),
    goal(
      "kernel-sqlite-1-vs-langgraph",
      "SQLite NORMAL, 1 writer / LangGraph SqliteSaver.put(), 1 writer",
      of("session/sqlite/1", "peer/langgraph/1"),
      ">=",
      1,
    ),
    goal(
      `kernel-sqlite-${w}-vs-langgraph`,
      `SQLite NORMAL, ${w} writers / LangGraph SqliteSaver.put(), ${w} writers`,
      of(`session/sqlite/${w}`, `peer/langgraph/${w}`),
      ">=",
      1.3,
    ),
  ];
}
