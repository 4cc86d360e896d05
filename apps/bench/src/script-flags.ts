import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

/** What every benchmark script reads from its command line and environment. */
export interface ScriptFlags {
  /** Tiny counts, figures meaningless: `--smoke` or `BENCH_SMOKE` set to anything but `0`. */
  readonly smoke: boolean;
  /** Where the JSON goes: `--out <dir>`, else `BENCH_OUT`, else `<repo>/bench-results`. */
  readonly outDir: string;
}

export function scriptFlags(
  argv: readonly string[] = process.argv.slice(2),
  env: Readonly<Record<string, string | undefined>> = process.env,
): ScriptFlags {
  const smoke =
    argv.includes("--smoke") || (env.BENCH_SMOKE !== undefined && env.BENCH_SMOKE !== "0");
  const outFlag = argv.indexOf("--out");
  const outArg = outFlag >= 0 ? argv[outFlag + 1] : undefined;
  if (outFlag >= 0 && (outArg === undefined || outArg.startsWith("--")))
    throw new TypeError("--out needs a directory");
  return { smoke, outDir: outArg ?? env.BENCH_OUT ?? join(repoRoot(), "bench-results") };
}

/** Writes one benchmark's JSON report as `<outDir>/<name>`, creating the folder. */
export function writeReport(outDir: string, name: string, report: unknown): void {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, name), JSON.stringify(report, null, 2) + "\n");
}
