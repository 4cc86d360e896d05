import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const STRACE = "/usr/bin/strace";
/** How the children run: TypeScript sources through tsx, resolving packages to their sources. */
export const NODE_ARGS = ["--conditions=@durably/source", "--import", "tsx"];

/** Why strace cannot inject faults here (not installed, ptrace not permitted), or undefined. */
export function straceProblem(): string | undefined {
  if (!existsSync(STRACE)) return `${STRACE} is not installed`;
  // One real injection: node opens a file that strace makes fail with EIO.
  const target = join(tmpdir(), `durably-sqlite-strace-probe-${process.pid}`);
  const script = `try { require("node:fs").openSync(${JSON.stringify(target)}) } catch (e) { process.exit(e.code === "EIO" ? 0 : 4) } process.exit(3)`;
  const probe = spawnSync(
    STRACE,
    [
      "-f",
      "-qq",
      "-o",
      "/dev/null",
      "-P",
      target,
      "-e",
      "trace=openat",
      "-e",
      "inject=openat:error=EIO",
      "--",
      process.execPath,
      "-e",
      script,
    ],
    { encoding: "utf8", timeout: 20_000 },
  );
  if (probe.error) return `strace could not run: ${probe.error.message}`;
  if (probe.status !== 0)
    return `strace cannot inject faults here (exit ${probe.status}): ${probe.stderr.trim()}`;
  return undefined;
}

/**
 * Runs a TypeScript child under `strace -f`, injecting `inject` (for
 * example `fsync:error=EIO:when=2`) into the syscalls `trace` names, only
 * where they touch one of `paths`. Returns the last line the child printed,
 * parsed as JSON.
 */
export function childUnderStrace(
  paths: readonly string[],
  trace: string,
  inject: string,
  child: string,
  args: readonly string[],
): Record<string, unknown> {
  const run = spawnSync(
    STRACE,
    [
      "-f",
      "-qq",
      "-o",
      "/dev/null",
      ...paths.flatMap((p) => ["-P", p]),
      "-e",
      `trace=${trace}`,
      "-e",
      `inject=${inject}`,
      "--",
      process.execPath,
      ...NODE_ARGS,
      child,
      ...args,
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  const line = run.stdout.trim().split("\n").pop() ?? "";
  if (run.status !== 0 || !line.startsWith("{"))
    throw new Error(`child ${child} failed (status ${run.status}): ${run.stderr}`);
  return JSON.parse(line) as Record<string, unknown>;
}
