import type { BenchReport, Goal } from "./report.js";

/** A plain-text table: first column left aligned, the rest right aligned. */
export function textTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) =>
        i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number),
      )
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

export const int = (n: number): string =>
  Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-";
export const times = (n: number): string =>
  !Number.isFinite(n)
    ? "-"
    : n >= 100
      ? `${n.toFixed(0)}x`
      : n >= 0.01
        ? `${n.toFixed(2)}x`
        : `1/${(1 / n).toFixed(0)}`;
export const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
export const micros = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? "" : n >= 100 ? n.toFixed(0) : n.toFixed(1);
/** A goal's value or target in its unit. */
export const goalValue = (n: number, unit: "x" | "µs" | undefined): string =>
  unit === "µs" ? `${micros(n)} µs` : times(n);
/** Goals as a table: description, measured value, target, and whether it is met (an unmet one in capitals, to stand out). */
export function goalsTable(goals: readonly Goal[]): string {
  return textTable(
    ["goal", "measured", "target", "met"],
    goals.map((g) => [
      g.description,
      goalValue(g.value, g.unit),
      `${g.comparator} ${goalValue(g.target, g.unit)}`,
      g.met ? "yes" : "NO",
    ]),
  );
}
export const mib = (bytes: number): string =>
  `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 2 : 1)} MiB`;

/** The whole report as the text `pnpm bench` prints. */
export function renderReport(report: BenchReport): string {
  const { meta, commits, growing, reopen, goals } = report;
  const label = new Map(commits.cases.map((c) => [c.id, c.label]));
  const out: string[] = [];
  out.push(
    `Durably benchmarks${meta.smoke ? " (SMOKE: tiny counts, figures meaningless)" : ""}: node ${meta.node}, ${meta.cpus} x ${meta.cpuModel}`,
    `load average at start ${meta.loadavgStart.map((l) => l.toFixed(2)).join(" ")}, at end ${meta.loadavgEnd.map((l) => l.toFixed(2)).join(" ")}`,
    "",
    `Commits/s, one entry append + one document delta per commit; median of ${meta.rounds} interleaved rounds of ${meta.roundMs} ms${meta.roundWarmupMs ? `, each after ${meta.roundWarmupMs} ms untimed` : ""}`,
    "CPU: process CPU µs per commit (all threads); kernel: the Session's own, its CPU per commit minus storage.commit direct's",
  );
  const byId = new Map(commits.cases.map((c) => [c.id, c]));
  out.push(
    textTable(
      [
        "case",
        "commits/s",
        "baseline",
        "baseline/s",
        "ratio",
        "CPU µs",
        "baseline CPU µs",
        "kernel µs",
        "batches/call",
      ],
      commits.pairs.map((p) => {
        const c = byId.get(p.caseId);
        return [
          label.get(p.caseId) ?? p.caseId,
          int(p.perSecond),
          p.baselineId,
          int(p.baselinePerSecond),
          times(p.ratio),
          micros(p.cpuMicros),
          micros(p.baselineCpuMicros),
          micros(p.kernelMicros),
          c?.batchesPerCall === undefined ? "" : c.batchesPerCall.toFixed(1),
        ];
      }),
    ),
    "",
    "Raw baselines (same rows, lines or keys, written straight to the library)",
    textTable(
      ["baseline", "id", "commits/s", "CPU µs"],
      commits.cases
        .filter((c) => c.family === "raw")
        .map((c) => [c.label, c.id, int(c.perSecond), micros(c.cpuMicros)]),
    ),
    "",
    `Growing conversation: ${growing.steps} steps, each adding one ${growing.messageBytes}-byte message (SQLite, both synchronous=NORMAL)`,
    textTable(
      ["", "steps/s q1", "q2", "q3", "q4 (last)", "bytes at end (file+WAL)", "after close"],
      [
        ["Durably (1 entry per step)", growing.durably],
        ["LangGraph SqliteSaver (whole list per step)", growing.langgraph],
      ].map(([name, side]) => {
        const s = side as typeof growing.durably;
        return [
          name as string,
          ...s.quarterStepsPerSecond.map(int),
          mib(s.bytesOnDisk),
          mib(s.bytesAfterClose),
        ];
      }),
    ),
    `  last quarter: ${times(growing.speedup)} LangGraph's steps/s; bytes: ${times(growing.bytesRatio)} of LangGraph's`,
    "",
    "Reopen against log size (fresh process per measurement; Durably = open storage + Session.open)",
    textTable(
      [
        "backend",
        "commits",
        "on disk",
        "reopen ms",
        "raw ms",
        "ratio",
        "RSS after",
        "RSS growth",
        "raw RSS growth",
      ],
      reopen.rows.map((r) => [
        r.backend,
        int(r.commits),
        mib(r.bytesOnDisk),
        ms(r.durablyMs),
        ms(r.rawMs),
        times(r.ratio),
        mib(r.durablyRss),
        mib(r.durablyRssGrowth),
        mib(r.rawRssGrowth),
      ]),
    ),
    `  ms per commit, largest size / next size down: jsonl ${reopen.growth.jsonl.toFixed(2)}, sqlite ${reopen.growth.sqlite.toFixed(2)} (1 = linear)`,
    "",
    "Goals",
    goalsTable(goals),
  );
  return out.join("\n");
}
