/**
 * The Session's share of the cost (issue 21's cases only), short enough to
 * run while working on the kernel: the Session against raw storage and
 * against LangGraph's `SqliteSaver.put`, in interleaved rounds, with the
 * kernel's own CPU per commit and the load average printed beside.
 * `pnpm bench` runs the same cases as part of the full run; the README's
 * figures come from there.
 *
 * node --conditions=@durably/source --import tsx src/kernel.bench.ts [--smoke] [--rounds N] [--round-ms MS]
 */
import { loadavg } from "node:os";
import { rawLevel, rawMemory, rawFs, rawSqlite, sampleJsonlLines } from "./baselines.js";
import { backend } from "./backends.js";
import { sessionCase } from "./commits.js";
import { directCase } from "./direct.js";
import { evaluateKernelGoals, pairCases } from "./goals.js";
import { measureInterleaved } from "./harness.js";
import { Scratch } from "./paths.js";
import { langgraphCase } from "./peer-langgraph.js";
import { goalValue, int, micros, textTable, times } from "./table.js";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} needs a positive number, got ${process.argv[at + 1]}`);
  return value;
}

const smoke = process.argv.includes("--smoke");
const writers = smoke ? 8 : 64;
const rounds = flag("--rounds", smoke ? 1 : 3);
const roundMs = flag("--round-ms", smoke ? 20 : 500);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

const scratch = new Scratch();
try {
  process.stderr.write(`load average at start: ${load()}\n`);
  const lines = await sampleJsonlLines(scratch);
  const sqlite = backend("sqlite");
  const full = backend("sqlite-full");
  const jsonl = backend("jsonl");
  const store = backend("store-level");
  const cases = [
    sessionCase(backend("memory"), 1, scratch),
    rawMemory(1),
    ...[1, writers].flatMap((w) => [
      sessionCase(sqlite, w, scratch),
      directCase(sqlite, w, scratch),
      rawSqlite(w, scratch),
      sessionCase(full, w, scratch),
      directCase(full, w, scratch),
      rawSqlite(w, scratch, true),
      langgraphCase(w, scratch),
    ]),
    sessionCase(jsonl, writers, scratch),
    directCase(jsonl, writers, scratch),
    rawFs(writers, false, lines, scratch),
    sessionCase(store, writers, scratch),
    directCase(store, writers, scratch),
    rawLevel(writers, scratch),
  ];
  const results = await measureInterleaved(cases, {
    rounds,
    roundMs,
    warmupMs: smoke ? 5 : 200,
    log: (line) => process.stderr.write(line + "\n"),
  });
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
  process.stdout.write(
    textTable(
      ["goal", "value", "target", "met"],
      goals.map((g) => [
        g.description,
        goalValue(g.value, g.unit),
        `${g.comparator} ${goalValue(g.target, g.unit)}`,
        g.met ? "yes" : "no",
      ]),
    ) + "\n",
  );
  process.stdout.write(
    `\n${rounds} rounds of ${roundMs} ms per case, median; load average at end: ${load()}\n`,
  );
} finally {
  scratch.dispose();
}
