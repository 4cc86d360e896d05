import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-pg-smoke-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

// Against the server CI starts (DURABLY_PG_URL); without one the benchmark itself says it skips.
describe.skipIf(!process.env.DURABLY_PG_URL)("postgres.bench --smoke", () => {
  it(
    "prints the table and writes postgres.json with every case next to its raw baseline",
    { timeout: 120_000 },
    async () => {
      const { stdout } = await run(
        process.execPath,
        ["--conditions=@durably/source", "--import", "tsx", "src/postgres.bench.ts", "--smoke"],
        {
          cwd: join(import.meta.dirname, ".."),
          env: { ...process.env, BENCH_SMOKE: "1", BENCH_OUT: out },
        },
      );
      expect(stdout).toContain("PostgreSQL commits/s");
      expect(stdout).toContain("Session.commit on PostgresStorage, 1 writer");
      const report = JSON.parse(readFileSync(join(out, "postgres.json"), "utf8")) as {
        smoke: boolean;
        rows: { id: string; perSecond: number }[];
        goals: { value: number; target: number }[];
      };
      expect(report.smoke).toBe(true);
      expect(report.rows.map((r) => r.id).sort()).toEqual([
        "durably/1",
        "durably/8",
        "raw/1",
        "raw/8",
      ]);
      for (const r of report.rows) expect(r.perSecond, r.id).toBeGreaterThan(0);
      expect(report.goals).toHaveLength(2);
      for (const g of report.goals) expect(Number.isFinite(g.value)).toBe(true);
    },
  );
});
