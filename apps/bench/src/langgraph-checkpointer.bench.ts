// LangGraph checkpointers on a growing conversation: the same real StateGraph
// (MessagesAnnotation, one node adding one message per step, 2,000 steps) on
// LangGraph's SqliteSaver and on DurablyCheckpointSaver over Durably's SQLite
// storage, plus the same graph with a checkpointer that stores nothing (what
// LangGraph itself costs per step: no checkpointer can be faster). Each side
// runs alone in its own child process, one after the other, never
// interleaved, the disk flushed before each. Besides wall-clock steps/s, each step's CPU time is measured
// (process.cpuUsage), which other load on a shared machine disturbs less.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/langgraph-checkpointer.bench.ts [--smoke]
//
// Writes <repo>/bench-results/langgraph-checkpointer.json (or BENCH_OUT) and prints a table.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { GRAPH_SIDES, type GraphSide, type GraphSideReport } from "./langgraph-graph-child.js";
import { Scratch } from "./paths.js";
import { int, mib, textTable, times } from "./table.js";
import { scriptFlags, writeReport } from "./script-flags.js";

const { smoke, outDir } = scriptFlags();
const STEPS = smoke ? 60 : 2000;
/** Message text length: LangGraph's serializer writes each message as about 300 bytes of JSON. */
const CONTENT_CHARS = 120;
const childPath = fileURLToPath(
  new URL(`./langgraph-graph-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

export interface SideSummary {
  side: GraphSide;
  steps: number;
  messageBytes: number;
  /** Graph steps/s (wall clock) in each quarter of the steps, first to last. */
  quarterStepsPerSecond: number[];
  /** CPU milliseconds per step of the whole process in each quarter (less sensitive to other load). */
  quarterCpuMsPerStep: number[];
  bytesOnDisk: number;
  bytesAfterClose: number;
  seconds: number;
}

function quarterSlices(values: readonly number[]): number[][] {
  const size = Math.max(1, Math.floor(values.length / 4));
  return [0, 1, 2, 3].map((q) => values.slice(q * size, q === 3 ? values.length : (q + 1) * size));
}
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Flushes dirty pages first (best effort), so no side pays for an earlier side's writes. */
function settleDisk(): void {
  try {
    execFileSync("sync", { stdio: "ignore" });
  } catch {
    // no sync command: nothing to wait for
  }
}

function runSide(side: GraphSide, dir: string): SideSummary {
  mkdirSync(dir, { recursive: true });
  settleDisk();
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, childPath, side, String(STEPS), dir, String(CONTENT_CHARS)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 },
  );
  const report = JSON.parse(out.trim().split("\n").pop() as string) as GraphSideReport;
  return {
    side,
    steps: report.steps,
    messageBytes: report.messageBytes,
    quarterStepsPerSecond: quarterSlices(report.stepMs).map((q) => (q.length / sum(q)) * 1000),
    quarterCpuMsPerStep: quarterSlices(report.cpuMs).map((q) => sum(q) / q.length),
    bytesOnDisk: report.bytesOnDisk,
    bytesAfterClose: report.bytesAfterClose,
    seconds: sum(report.stepMs) / 1000,
  };
}

interface Goal {
  name: string;
  value: number;
  comparator: ">=" | "<=";
  target: number;
  met: boolean;
}
const goal = (name: string, value: number, comparator: ">=" | "<=", target: number): Goal => ({
  name,
  value,
  comparator,
  target,
  met: comparator === ">=" ? value >= target : value <= target,
});

const last = (xs: readonly number[]) => xs[xs.length - 1] as number;
/** CPU per step the checkpointer adds: the side's, less LangGraph's own (the stores-nothing side). */
const saverCpu = (side: SideSummary, nothing: SideSummary) =>
  side.quarterCpuMsPerStep.map((ms, q) => ms - (nothing.quarterCpuMsPerStep[q] as number));

const scratch = new Scratch();
try {
  const started = loadavg()[0] as number;
  const sides = GRAPH_SIDES.map((side) => runSide(side, scratch.path(side)));
  const bySide = (side: GraphSide) => sides.find((s) => s.side === side) as SideSummary;
  const [nothing, peer, durably] = [bySide("nothing"), bySide("sqlite-saver"), bySide("durably")];
  const peerSaverCpu = saverCpu(peer, nothing);
  const durablySaverCpu = saverCpu(durably, nothing);
  const goals = [
    goal(
      "graph steps/s (wall), last quarter: Durably / SqliteSaver",
      last(durably.quarterStepsPerSecond) / last(peer.quarterStepsPerSecond),
      ">=",
      10,
    ),
    goal(
      "graph CPU per step, last quarter: SqliteSaver / Durably",
      last(peer.quarterCpuMsPerStep) / last(durably.quarterCpuMsPerStep),
      ">=",
      10,
    ),
    goal(
      "checkpointer CPU per step (graph less LangGraph's own), last quarter: SqliteSaver / Durably",
      last(peerSaverCpu) / last(durablySaverCpu),
      ">=",
      10,
    ),
    goal(
      "bytes on disk: Durably / SqliteSaver",
      durably.bytesOnDisk / peer.bytesOnDisk,
      "<=",
      1 / 50,
    ),
    goal(
      "Durably checkpointer CPU per step, last quarter / second quarter (flat)",
      last(durablySaverCpu) / (durablySaverCpu[1] as number),
      "<=",
      1.5,
    ),
  ];
  const ceiling = {
    wall: last(nothing.quarterStepsPerSecond) / last(peer.quarterStepsPerSecond),
    cpu: last(peer.quarterCpuMsPerStep) / last(nothing.quarterCpuMsPerStep),
  };
  const label: Record<GraphSide, string> = {
    nothing: "a checkpointer that stores nothing",
    "sqlite-saver": "SqliteSaver",
    durably: "DurablyCheckpointSaver (SQLite)",
  };
  const fixed = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");
  const table = textTable(
    [
      "checkpointer",
      "graph steps/s by quarter",
      "CPU ms/step by quarter",
      "on disk",
      "after close",
      "seconds",
    ],
    sides.map((s) => [
      label[s.side],
      s.quarterStepsPerSecond.map(int).join(" / "),
      s.quarterCpuMsPerStep.map(fixed).join(" / "),
      s.side === "nothing" ? "-" : mib(s.bytesOnDisk),
      s.side === "nothing" ? "-" : mib(s.bytesAfterClose),
      s.seconds.toFixed(1),
    ]),
  );
  const goalLines = goals.map(
    (g) =>
      `${g.met ? "met    " : "NOT MET"}  ${g.name}: ${times(g.value)} (goal ${g.comparator} ${times(g.target)})`,
  );
  const text = [
    `LangGraph checkpointers, growing conversation${smoke ? " (SMOKE: tiny counts, figures meaningless)" : ""}: ${int(STEPS)} steps, one message (${durably.messageBytes} bytes serialized) per step, node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, load average ${started.toFixed(1)} at start and ${(loadavg()[0] as number).toFixed(1)} at the end`,
    "",
    table,
    "",
    ...goalLines,
    `ceiling: with a checkpointer that stores nothing, LangGraph runs ${times(ceiling.wall)} the steps/s (${times(ceiling.cpu)} less CPU per step) of SqliteSaver in the last quarter; no checkpointer can beat that graph ratio`,
  ].join("\n");
  writeReport(outDir, "langgraph-checkpointer.json", {
    smoke,
    steps: STEPS,
    contentChars: CONTENT_CHARS,
    loadAverage: { start: started, end: loadavg()[0] },
    sides,
    goals,
    ceiling,
  });
  process.stdout.write(text + "\n");
} finally {
  scratch.dispose();
}
