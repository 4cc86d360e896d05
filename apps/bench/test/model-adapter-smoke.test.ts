import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";

const smoke = smokeRunner("adapter");

describe("model-adapter.bench --smoke", () => {
  it(
    "measures every consumer of both providers and writes the JSON",
    { timeout: 120_000 },
    async () => {
      const { stdout, json } = await smoke("model-adapter.bench.ts");
      expect(stdout).toContain("Model adapter overhead per streamed chunk");
      expect(stdout).toContain("SMOKE");
      const report = json<{
        smoke: boolean;
        rows: { provider: string; side: string; chunks: number; nsPerChunk: number }[];
      }>("model-adapter.json");
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
