import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll } from "vitest";

const run = promisify(execFile);

/** A benchmark script's smoke run: what it printed, and the JSON files it wrote. */
export interface SmokeRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly json: <T>(name: string) => T;
}

/**
 * Runs `src/<script>` from sources in smoke mode, as a real child process, with
 * its output going to a fresh folder removed after the file's tests.
 */
/** `nodeFlags` go before the script (e.g. `--expose-gc`). */
export function smokeRunner(
  label: string,
  nodeFlags: readonly string[] = [],
): (script: string) => Promise<SmokeRun> {
  const out = mkdtempSync(join(tmpdir(), `durably-bench-${label}-`));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  return async (script) => {
    const { stdout, stderr } = await run(
      process.execPath,
      [...nodeFlags, "--conditions=@durably/source", "--import", "tsx", `src/${script}`, "--smoke"],
      {
        cwd: join(import.meta.dirname, "..", ".."),
        env: { ...process.env, BENCH_SMOKE: "1", BENCH_OUT: out },
      },
    );
    return {
      stdout,
      stderr,
      json: <T>(name: string) => JSON.parse(readFileSync(join(out, name), "utf8")) as T,
    };
  };
}
