import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { commitsChart, reopenChart } from "./chart.js";
import type { BenchConfig } from "./config.js";
import { evaluateGoals, pairCases } from "./goals.js";
import { measureIsolated } from "./isolated.js";
import { Scratch } from "./paths.js";
import { growingConversation } from "./peer-langgraph.js";
import { reopenFamily } from "./reopen.js";
import type { BenchReport } from "./report.js";
import { renderReport } from "./table.js";

/** Runs every benchmark family (each commit case and each reopen in a child process) and returns the report. */
export async function runBench(
  config: BenchConfig,
  say: (line: string) => void = () => undefined,
): Promise<BenchReport> {
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const log = (line: string) => say(`[${((performance.now() - t0) / 1000).toFixed(1)}s] ${line}`);
  const loadavgStart = loadavg();
  const scratch = new Scratch();
  try {
    log(
      "commits: Session on every backend, raw baselines and the LangGraph peer, interleaved rounds, each case in its own process",
    );
    const results = await measureIsolated(
      { name: "full", writers: config.writers },
      { ...config, log },
    );

    log(`growing conversation: ${config.growingSteps} steps, Durably and LangGraph alternating`);
    const growing = await growingConversation(config.growingSteps, config.messageBytes, scratch);

    log(`reopen: ${config.reopenSizes.join(", ")} commits`);
    const reopen = await reopenFamily(config.reopenSizes, config.reopenRounds, scratch, log);

    const cpu = cpus();
    return {
      meta: {
        startedAt,
        finishedAt: new Date().toISOString(),
        smoke: config.smoke,
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        cpus: cpu.length,
        cpuModel: cpu[0]?.model.trim() ?? "unknown",
        loadavgStart,
        loadavgEnd: loadavg(),
        rounds: config.rounds,
        roundMs: config.roundMs,
        roundWarmupMs: config.roundWarmupMs,
        writers: config.writers,
        reopenRounds: config.reopenRounds,
      },
      commits: { cases: results, pairs: pairCases(results) },
      growing,
      reopen,
      goals: evaluateGoals(results, growing, reopen, config.writers),
    };
  } finally {
    scratch.dispose();
  }
}

/** The files a run leaves in `outDir`. */
export const OUTPUT_FILES = [
  "commits.json",
  "growing-conversation.json",
  "reopen.json",
  "summary.json",
  "commits.svg",
  "reopen.svg",
] as const;

/** Writes the JSON (one file per family plus a summary with the goals), the charts and the text table. */
export function writeReport(report: BenchReport, outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  const json = (name: string, value: unknown) =>
    writeFileSync(join(outDir, name), JSON.stringify(value, null, 2) + "\n");
  json("commits.json", { meta: report.meta, ...report.commits });
  json("growing-conversation.json", { meta: report.meta, ...report.growing });
  json("reopen.json", { meta: report.meta, ...report.reopen });
  json("summary.json", { meta: report.meta, goals: report.goals });
  writeFileSync(join(outDir, "commits.svg"), commitsChart(report));
  writeFileSync(join(outDir, "reopen.svg"), reopenChart(report));
  const text = renderReport(report);
  writeFileSync(join(outDir, "table.txt"), text + "\n");
  return text;
}
