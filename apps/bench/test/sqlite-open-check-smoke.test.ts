import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("sqlite-open-check bench --smoke", () => {
  it(
    "builds a file and times quick_check, open with and without the check, and integrity_check",
    { timeout: 120_000 },
    async () => {
      const { stdout } = await run(
        process.execPath,
        [
          "--conditions=@durably/source",
          "--import",
          "tsx",
          "src/sqlite-open-check.bench.ts",
          "--smoke",
        ],
        { cwd: join(import.meta.dirname, "..") },
      );
      expect(stdout).toMatch(
        /^\d+\.\d MB \(SMOKE\): quick_check [\d.]+ ms CPU \([\d.]+ ms wall\); open\+close with the check [\d.]+ ms CPU .*, without [\d.]+ ms CPU .*; integrity_check [\d.]+ ms CPU/m,
      );
    },
  );
});
