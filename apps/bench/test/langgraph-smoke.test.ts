import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import type { SideSummary } from "../src/langgraph-checkpointer.bench.ts";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-langgraph-smoke-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("langgraph-checkpointer.bench --smoke", () => {
  it(
    "runs the graph on every side in its own process and writes langgraph-checkpointer.json",
    { timeout: 180_000 },
    async () => {
      const { stdout } = await run(
        process.execPath,
        [
          "--conditions=@durably/source",
          "--import",
          "tsx",
          "src/langgraph-checkpointer.bench.ts",
          "--smoke",
        ],
        {
          cwd: join(import.meta.dirname, ".."),
          env: { ...process.env, BENCH_SMOKE: "1", BENCH_OUT: out },
        },
      );
      expect(stdout).toContain("SMOKE");
      for (const label of ["SqliteSaver", "DurablyCheckpointSaver (SQLite)", "stores nothing"])
        expect(stdout).toContain(label);
      const report = JSON.parse(readFileSync(join(out, "langgraph-checkpointer.json"), "utf8")) as {
        smoke: boolean;
        steps: number;
        sides: SideSummary[];
        goals: { value: number; met: boolean; comparator: string; target: number }[];
      };
      expect(report.smoke).toBe(true);
      expect(report.sides.map((s) => s.side).sort()).toEqual([
        "durably",
        "nothing",
        "sqlite-saver",
      ]);
      for (const side of report.sides) {
        expect(side.steps, side.side).toBe(report.steps);
        expect(side.quarterStepsPerSecond).toHaveLength(4);
        for (const n of [...side.quarterStepsPerSecond, ...side.quarterCpuMsPerStep])
          expect(Number.isFinite(n) && n > 0, side.side).toBe(true);
        if (side.side !== "nothing") expect(side.bytesOnDisk, side.side).toBeGreaterThan(0);
      }
      expect(report.goals).toHaveLength(5);
      for (const g of report.goals) {
        expect(Number.isFinite(g.value)).toBe(true);
        expect(g.met).toBe(g.comparator === ">=" ? g.value >= g.target : g.value <= g.target);
      }
    },
  );
});
