import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "durably-bench-adapter-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("model-adapter.bench --smoke", () => {
  it(
    "measures every consumer of both providers and writes the JSON",
    { timeout: 120_000 },
    async () => {
      const { stdout } = await run(
        process.execPath,
        [
          "--conditions=@durably/source",
          "--import",
          "tsx",
          "src/model-adapter.bench.ts",
          "--smoke",
        ],
        { cwd: join(import.meta.dirname, ".."), env: { ...process.env, BENCH_OUT: out } },
      );
      expect(stdout).toContain("Model adapter overhead per streamed chunk");
      expect(stdout).toContain("SMOKE");
      const report = JSON.parse(readFileSync(join(out, "model-adapter.json"), "utf8")) as {
        smoke: boolean;
        rows: { provider: string; side: string; chunks: number; nsPerChunk: number }[];
      };
      expect(report.smoke).toBe(true);
      expect(report.rows.map((r) => `${r.provider} / ${r.side}`)).toEqual([
        "in-memory LanguageModelV3 / provider stream, read directly",
        "in-memory LanguageModelV3 / aiSdkModel (Durably events)",
        "in-memory LanguageModelV3 / AI SDK streamText",
        "openai-compatible over local HTTP/SSE / provider stream, read directly",
        "openai-compatible over local HTTP/SSE / aiSdkModel (Durably events)",
        "openai-compatible over local HTTP/SSE / AI SDK streamText",
      ]);
      for (const row of report.rows) {
        expect(row.chunks).toBeGreaterThan(0);
        expect(Number.isFinite(row.nsPerChunk) && row.nsPerChunk > 0).toBe(true);
      }
    },
  );
});
