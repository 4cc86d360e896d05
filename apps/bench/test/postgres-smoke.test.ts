import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";

const smoke = smokeRunner("pg");

// Against the server CI starts (DURABLY_PG_URL); without one the benchmark itself says it skips.
describe.skipIf(!process.env.DURABLY_PG_URL)("postgres.bench --smoke", () => {
  it(
    "prints the table and writes postgres.json with every case next to its raw baseline",
    { timeout: 120_000 },
    async () => {
      const { stdout, json } = await smoke("postgres.bench.ts");
      expect(stdout).toContain("PostgreSQL commits/s");
      expect(stdout).toContain("Session.commit on PostgresStorage, 1 writer");
      const report = json<{
        smoke: boolean;
        rows: { id: string; perSecond: number }[];
        goals: { value: number; target: number }[];
      }>("postgres.json");
      expect(report.smoke).toBe(true);
      expect(report.rows.map((r) => r.id).sort()).toEqual([
        "durably/1",
        "durably/8",
        "host/1x1",
        "host/1x1/parameterized",
        "host/1x32",
        "host/1x32/parameterized",
        "host/8x4",
        "host/8x4/parameterized",
        "hosts/2x8x4",
        "raw/1",
        "raw/8",
      ]);
      for (const r of report.rows) expect(r.perSecond, r.id).toBeGreaterThan(0);
      expect(stdout).toMatch(/2 host processes x 8 sessions x 4 writers: [\d,]+ commits\/s in all/);
      expect(report.goals).toHaveLength(3);
      for (const g of report.goals) expect(Number.isFinite(g.value)).toBe(true);
    },
  );
});
