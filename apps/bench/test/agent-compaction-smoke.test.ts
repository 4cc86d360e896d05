import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-compaction-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Window {
  fromTurn: number;
  toTurn: number;
  medianMs: number;
  maxRequestMessages: number;
}

describe("agent-compaction.bench --smoke", () => {
  it(
    "runs the compacted and the uncompacted conversation and writes the JSON",
    { timeout: 120_000 },
    async () => {
      const { stdout } = await run(
        process.execPath,
        [
          "--conditions=@durably/source",
          "--import",
          "tsx",
          "src/agent-compaction.bench.ts",
          "--smoke",
        ],
        { cwd: join(import.meta.dirname, ".."), env: { ...process.env, BENCH_OUT: out } },
      );
      expect(stdout).toContain("SMOKE");
      const report = JSON.parse(readFileSync(join(out, "agent-compaction.json"), "utf8")) as {
        smoke: boolean;
        every: number;
        keepLastTurns: number;
        sides: {
          side: string;
          turns: number;
          windows: Window[];
          compactions: { status: string }[];
        }[];
      };
      expect(report.smoke).toBe(true);
      const [compacted, uncompacted] = report.sides;
      expect(compacted?.side).toBe("compacted");
      expect(compacted?.windows.map((w) => w.toTurn)).toEqual([20, 40, 60]);
      expect(compacted?.compactions.map((c) => c.status)).toEqual(["compacted", "compacted"]);
      // Compacted, the request stays bounded: at most the turns since the last compaction plus
      // the kept ones (two messages each), the summary and the new input.
      const bound = 2 * (report.every + report.keepLastTurns) + 1;
      for (const w of compacted?.windows ?? [])
        expect(w.maxRequestMessages).toBeLessThanOrEqual(bound);
      // Never compacted, it grows with the conversation.
      const grows = uncompacted?.windows.map((w) => w.maxRequestMessages) ?? [];
      expect(grows).toEqual([39, 79]);
    },
  );
});
