import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";
import type { SideSummary } from "../src/langgraph-checkpointer.bench.ts";

const smoke = smokeRunner("langgraph");

describe("langgraph-checkpointer.bench --smoke", () => {
  it(
    "runs the graph on every side in its own process and writes langgraph-checkpointer.json",
    { timeout: 180_000 },
    async () => {
      const { stdout, json } = await smoke("langgraph-checkpointer.bench.ts");
      expect(stdout).toContain("SMOKE");
      for (const label of ["SqliteSaver", "DurablyCheckpointSaver (SQLite)", "stores nothing"])
        expect(stdout).toContain(label);
      const report = json<{
        smoke: boolean;
        steps: number;
        sides: SideSummary[];
        goals: { value: number; met: boolean; comparator: string; target: number }[];
      }>("langgraph-checkpointer.json");
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
