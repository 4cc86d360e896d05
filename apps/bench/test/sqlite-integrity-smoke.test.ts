import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";

const smoke = smokeRunner("sqlite-integrity");

describe("sqlite-integrity bench --smoke", () => {
  it(
    "measures commits, entry reads, document reads, scans and opens, and writes its JSON",
    { timeout: 120_000 },
    async () => {
      const { stdout, json } = await smoke("sqlite-integrity.bench.ts");
      expect(stdout).toContain("SQLite integrity costs");
      const report = json<{
        smoke: boolean;
        results: { id: string; perSecond: number; cpuMicrosPerOp: number }[];
      }>("sqlite-integrity.json");
      expect(report.smoke).toBe(true);
      expect(report.results.map((r) => r.id).sort()).toEqual([
        "commit/this",
        "commit/this/limit-0",
        "commit/this/no-limit",
        "document-read/this",
        "entry-read/this",
        "open/this",
        "open/this/no-check",
        "scan/this",
      ]);
      for (const r of report.results) {
        expect(r.perSecond, r.id).toBeGreaterThan(0);
        expect(r.cpuMicrosPerOp, r.id).toBeGreaterThan(0);
      }
    },
  );
});
