import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";

const smoke = smokeRunner("jsonl-compaction", ["--expose-gc"]);

interface Result {
  workload: string;
  commits: number;
  compactedBytes: number;
  uncompactedBytes: number;
  liveBytes: number;
  reopenCompactedMs: number;
  reopenUncompactedMs: number;
  rawSnapshotReadMs: number;
  commitsPerSecond?: { without: number; during: number; ratio: number };
}

describe("jsonl-compaction bench --smoke", () => {
  it(
    "compacts both workloads, measures reopen, disk and commits during a compaction, and writes its JSON",
    { timeout: 180_000 },
    async () => {
      const { stdout, json } = await smoke("jsonl-compaction.bench.ts");
      expect(stdout).toContain("JSONL compaction (smoke)");
      const report = json<{ smoke: boolean; results: Result[] }>("jsonl-compaction.json");
      expect(report.smoke).toBe(true);
      expect(report.results.map((r) => r.workload)).toEqual(["churn", "entries"]);
      for (const r of report.results) {
        expect(r.commits).toBe(10_000);
        // Timing goals are not asserted (a shared machine); sizes are deterministic enough.
        expect(r.compactedBytes, r.workload).toBeLessThan(r.uncompactedBytes);
        expect(r.compactedBytes, r.workload).toBeLessThan(2 * r.liveBytes);
        for (const value of [r.reopenCompactedMs, r.reopenUncompactedMs, r.rawSnapshotReadMs])
          expect(value, r.workload).toBeGreaterThan(0);
      }
      const entries = report.results[1]?.commitsPerSecond;
      expect(entries?.during).toBeGreaterThan(0);
      expect(entries?.without).toBeGreaterThan(0);
    },
  );
});
