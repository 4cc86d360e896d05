import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-jsonl-compaction-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

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
      const { stdout } = await run(
        process.execPath,
        [
          "--expose-gc",
          "--conditions=@durably/source",
          "--import",
          "tsx",
          "src/jsonl-compaction.bench.ts",
          "--smoke",
          "--out",
          out,
        ],
        { cwd: join(import.meta.dirname, "..") },
      );
      expect(stdout).toContain("JSONL compaction (smoke)");
      const report = JSON.parse(readFileSync(join(out, "jsonl-compaction.json"), "utf8")) as {
        smoke: boolean;
        results: Result[];
      };
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
