import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";

const smoke = smokeRunner("kernel");

describe("kernel.bench --smoke", () => {
  it(
    "prints every Session case beside its raw baseline and a verdict for every kernel goal",
    { timeout: 240_000 },
    async () => {
      const { stdout, stderr } = await smoke("kernel.bench.ts");
      expect(stderr).toMatch(/load average at start: \d/);
      for (const pair of [
        "session/memory/1 +raw/memory/1",
        "session/sqlite/8 +raw/sqlite/8",
        "session/sqlite-full/1 +raw/sqlite-full/1",
        "session/jsonl/8 +raw/jsonl/8",
        "session/store-level/8 +raw/store-level/8",
        "peer/langgraph/8 +raw/sqlite/1",
      ])
        expect(stdout).toMatch(new RegExp(pair));
      const verdicts = stdout.split("\n").filter((line) => / (yes|NO)$/.test(line));
      expect(verdicts).toHaveLength(10);
      expect(stdout).toMatch(/load average at end: \d/);
    },
  );
});
