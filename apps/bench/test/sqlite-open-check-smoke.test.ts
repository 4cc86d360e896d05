import { describe, expect, it } from "vitest";
import { smokeRunner } from "./support/smoke-run.ts";

const smoke = smokeRunner("sqlite-open-check");

describe("sqlite-open-check bench --smoke", () => {
  it(
    "builds a file and times quick_check, open with and without the check, and integrity_check",
    { timeout: 120_000 },
    async () => {
      const { stdout } = await smoke("sqlite-open-check.bench.ts");
      expect(stdout).toMatch(
        /^\d+\.\d MB \(SMOKE\): quick_check [\d.]+ ms CPU \([\d.]+ ms wall\); open\+close with the check [\d.]+ ms CPU .*, without [\d.]+ ms CPU .*; integrity_check [\d.]+ ms CPU/m,
      );
    },
  );
});
