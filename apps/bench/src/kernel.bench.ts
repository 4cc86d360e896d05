/**
 * The Session's share of the cost (issue 21's cases only), short enough to
 * run while working on the kernel: the Session against raw storage and
 * against LangGraph's `SqliteSaver.put`, each case in a process of its own,
 * in interleaved rounds, with the kernel's own CPU per commit and the load
 * average printed beside.
 * `pnpm bench` runs the same cases as part of the full run; the README's
 * figures come from there.
 *
 * node --conditions=@durably/source --import tsx src/kernel.bench.ts [--smoke] [--rounds N] [--round-ms MS]
 */
import { loadavg } from "node:os";
import { configFrom } from "./config.js";
import { evaluateKernelGoals, pairCases } from "./goals.js";
import { measureIsolated } from "./isolated.js";
import { goalsTable, int, micros, textTable, times } from "./table.js";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} needs a positive number, got ${process.argv[at + 1]}`);
  return value;
}

// The warm-ups are the full run's (config.ts, where each is measured); rounds are fewer and shorter.
const config = configFrom(process.argv, process.env);
const smoke = config.smoke;
const writers = smoke ? 8 : 64;
const rounds = flag("--rounds", smoke ? 1 : 3);
const roundMs = flag("--round-ms", smoke ? 20 : 500);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

process.stderr.write(`load average at start: ${load()}\n`);
const results = await measureIsolated(
  { name: "kernel", writers },
  {
    rounds,
    roundMs,
    warmupMs: config.warmupMs,
    roundWarmupMs: config.roundWarmupMs,
    log: (line) => process.stderr.write(line + "\n"),
  },
);
const rows = pairCases(results).map((p) => [
  p.caseId,
  p.baselineId,
  int(p.perSecond),
  int(p.baselinePerSecond),
  times(p.ratio),
  micros(p.cpuMicros),
  micros(p.baselineCpuMicros),
  micros(p.kernelMicros),
]);
process.stdout.write(
  textTable(
    ["case", "baseline", "/s", "baseline /s", "ratio", "CPU µs", "baseline CPU µs", "kernel µs"],
    rows,
  ) + "\n\n",
);
const goals = evaluateKernelGoals(results, writers);
process.stdout.write(goalsTable(goals) + "\n");
process.stdout.write(
  `\n${rounds} rounds of ${roundMs} ms per case${config.roundWarmupMs > 0 ? `, each after ${config.roundWarmupMs} ms untimed` : ""}, each case in its own process, median; load average at end: ${load()}\n`,
);
