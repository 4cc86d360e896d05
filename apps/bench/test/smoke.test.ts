import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../src/backends.ts";
import type { BenchReport } from "../src/report.ts";
import { OUTPUT_FILES } from "../src/run.ts";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-smoke-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The whole CLI in smoke mode, from sources, as a real child process (reopen spawns its own children). */
const smoke = run(
  process.execPath,
  ["--conditions=@durably/source", "--import", "tsx", "src/main.ts", "--smoke", "--out", out],
  { cwd: join(import.meta.dirname, ".."), env: { ...process.env, BENCH_SMOKE: "1" } },
);

const json = <T>(name: string) => JSON.parse(readFileSync(join(out, name), "utf8")) as T;
const positive = (n: unknown) => typeof n === "number" && Number.isFinite(n) && n > 0;

describe("pnpm bench --smoke", () => {
  it("prints every table", { timeout: 300_000 }, async () => {
    const { stdout } = await smoke;
    for (const heading of [
      "SMOKE",
      "Commits/s",
      "Raw baselines",
      "Growing conversation",
      "Reopen",
      "Goals",
      "kernel µs",
    ])
      expect(stdout).toContain(heading);
    for (const b of BACKENDS) expect(stdout).toContain(`Session.commit, ${b.label}, 1 writer`);
    expect(stdout).toContain("LangGraph SqliteSaver.put()");
  });

  it("writes the JSON and SVG files with every case measured", { timeout: 300_000 }, async () => {
    await smoke;
    const commits = json<BenchReport["commits"] & { meta: BenchReport["meta"] }>("commits.json");
    expect(commits.meta.smoke).toBe(true);
    const w = commits.meta.writers;
    const ids = commits.cases.map((c) => c.id).sort();
    const expected = [
      ...BACKENDS.flatMap((b) => [`session/${b.id}/1`, `session/${b.id}/${w}`]),
      ...["sqlite", "sqlite-full", "jsonl", "jsonl-fsync", "store-level"].flatMap((b) => [
        `direct/${b}/1`,
        `direct/${b}/${w}`,
      ]),
      ...BACKENDS.map((b) => b.id).flatMap((b) => [`raw/${b}/1`, `raw/${b}/${w}`]),
      "peer/langgraph/1",
      `peer/langgraph/${w}`,
    ].sort();
    expect(ids).toEqual(expected);
    for (const c of commits.cases) {
      expect(positive(c.perSecond), c.id).toBe(true);
      expect(c.rounds).toHaveLength(commits.meta.rounds);
    }
    // Every Session case and the peer sit next to a baseline from the same run.
    expect(commits.pairs.map((p) => p.caseId).sort()).toEqual(
      ids.filter((id) => !id.startsWith("raw/")).sort(),
    );
    for (const p of commits.pairs) {
      expect(positive(p.ratio), p.caseId).toBe(true);
      expect(positive(p.cpuMicros) && positive(p.baselineCpuMicros), p.caseId).toBe(true);
    }
    // The kernel's own CPU per commit sits beside every Session case.
    for (const p of commits.pairs.filter((p) => p.caseId.startsWith("session/")))
      expect(Number.isFinite(p.kernelMicros), p.caseId).toBe(true);
    for (const c of commits.cases.filter((c) => c.family === "session"))
      expect(c.batchesPerCall, c.id).toBeGreaterThanOrEqual(1);

    const growing = json<BenchReport["growing"]>("growing-conversation.json");
    for (const side of [growing.durably, growing.langgraph]) {
      expect(side.quarterStepsPerSecond).toHaveLength(4);
      expect(positive(side.lastQuarterStepsPerSecond)).toBe(true);
      expect(positive(side.bytesOnDisk)).toBe(true);
    }

    const reopen = json<BenchReport["reopen"]>("reopen.json");
    expect(reopen.rows).toHaveLength(4);
    for (const r of reopen.rows) {
      for (const n of [r.durablyMs, r.rawMs, r.ratio, r.durablyRss, r.bytesOnDisk, r.rawItems])
        expect(positive(n), `${r.backend} ${r.commits}`).toBe(true);
    }
    expect(positive(reopen.growth.jsonl) && positive(reopen.growth.sqlite)).toBe(true);

    const summary = json<{ goals: BenchReport["goals"] }>("summary.json");
    expect(summary.goals).toHaveLength(21);
    for (const g of summary.goals) {
      expect(typeof g.met).toBe("boolean");
      expect(g.met).toBe(g.comparator === ">=" ? g.value >= g.target : g.value <= g.target);
    }

    for (const name of OUTPUT_FILES.filter((f) => f.endsWith(".svg"))) {
      const svg = readFileSync(join(out, name), "utf8");
      expect(svg.startsWith("<svg xmlns=")).toBe(true);
      expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
      expect(svg).not.toContain("NaN");
    }
    expect(readFileSync(join(out, "commits.svg"), "utf8")).toContain("store on classic-level");
    expect(readFileSync(join(out, "reopen.svg"), "utf8")).toContain("JSONL reopen");
  });
});
