import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-sqlite-integrity-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("sqlite-integrity bench --smoke", () => {
  it(
    "measures commits, entry reads and document reads, and writes its JSON",
    { timeout: 120_000 },
    async () => {
      const { stdout } = await run(
        process.execPath,
        [
          "--conditions=@durably/source",
          "--import",
          "tsx",
          "src/sqlite-integrity.bench.ts",
          "--smoke",
          "--out",
          out,
        ],
        { cwd: join(import.meta.dirname, "..") },
      );
      expect(stdout).toContain("SQLite integrity costs");
      const report = JSON.parse(readFileSync(join(out, "sqlite-integrity.json"), "utf8")) as {
        smoke: boolean;
        results: { id: string; perSecond: number; cpuMicrosPerOp: number }[];
      };
      expect(report.smoke).toBe(true);
      expect(report.results.map((r) => r.id).sort()).toEqual([
        "commit/this",
        "commit/this/limit-0",
        "commit/this/no-limit",
        "document-read/this",
        "entry-read/this",
      ]);
      for (const r of report.results) {
        expect(r.perSecond, r.id).toBeGreaterThan(0);
        expect(r.cpuMicrosPerOp, r.id).toBeGreaterThan(0);
      }
    },
  );
});
