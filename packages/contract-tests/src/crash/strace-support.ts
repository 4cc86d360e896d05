import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** Whether strace can inject faults here, and how to call it. */
export type StraceSupport =
  { usable: true; path: string; seccompBpf: boolean } | { usable: false; reason: string };

/** The probe's own time limit: strace plus a bare node start. */
const PROBE_TIMEOUT_MS = 20_000;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findStrace(env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/sbin", "/bin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    const candidate = join(dir, "strace");
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Runs one real injection: node opens a file that strace makes fail with
 * EIO. Anything else (no ptrace in the container, a seccomp profile that
 * forbids it, an strace without `inject`) gives the reason.
 */
function probe(strace: string, seccompBpf: boolean): string | undefined {
  const target = join(tmpdir(), `durably-strace-probe-${process.pid}`);
  const script = `try { require("node:fs").openSync(${JSON.stringify(target)}); process.exit(3) } catch (error) { process.exit(error.code === "EIO" ? 0 : 4) }`;
  const result = spawnSync(
    strace,
    [
      ...(seccompBpf ? ["-f", "--seccomp-bpf"] : []),
      "-qq",
      "-o",
      "/dev/null",
      "-e",
      "trace=openat",
      "-e",
      "inject=openat:error=EIO:when=1",
      "-P",
      target,
      "--",
      process.execPath,
      "-e",
      script,
    ],
    { encoding: "utf8", timeout: PROBE_TIMEOUT_MS },
  );
  if (result.error !== undefined) return `${strace} could not run: ${result.error.message}`;
  if (result.status === 0) return undefined;
  const said = result.stderr.trim().split("\n").slice(-3).join(" / ");
  if (result.status === 3 || result.status === 4)
    return `${strace} ran but its injected EIO did not reach the traced process (exit ${result.status}); ${said}`;
  return `${strace} cannot trace here (exit ${result.status ?? result.signal}): ${said || "no message"}`;
}

let cached: StraceSupport | undefined;

/**
 * Finds strace (`CRASH_STRACE`, else on PATH) and checks that it can trace and inject faults in this
 * environment (ptrace may be forbidden in a container). Done once per
 * process, synchronously, so the suite can register skipped cases with the
 * reason.
 */
export function straceSupport(env: NodeJS.ProcessEnv = process.env): StraceSupport {
  if (cached !== undefined) return cached;
  if (process.platform !== "linux") {
    cached = {
      usable: false,
      reason: `strace fault injection needs Linux, this is ${process.platform}`,
    };
    return cached;
  }
  const chosen = env.CRASH_STRACE;
  if (chosen !== undefined && chosen !== "" && !isExecutable(chosen)) {
    cached = { usable: false, reason: `CRASH_STRACE=${chosen} is not an executable file` };
    return cached;
  }
  const path = chosen !== undefined && chosen !== "" ? chosen : findStrace(env);
  if (path === undefined) {
    cached = {
      usable: false,
      reason: "strace is not installed (on Debian or Ubuntu: apt-get install strace)",
    };
    return cached;
  }
  // --seccomp-bpf stops the child only at the traced syscalls: much faster when it works.
  if (probe(path, true) === undefined) cached = { usable: true, path, seccompBpf: true };
  else {
    const reason = probe(path, false);
    cached =
      reason === undefined ? { usable: true, path, seccompBpf: false } : { usable: false, reason };
  }
  return cached;
}

/** One fault for `runWithFault`: fail `syscalls` with `errno` when they touch `path`. */
export interface PathFault {
  /** Only calls on this file are traced and failed (strace `-P`). */
  path: string;
  /** Comma-separated syscall names, e.g. `"fsync,fdatasync"`. */
  syscalls: string;
  errno: string;
  /** Which matching calls fail (strace's `when=`, e.g. `"1"` for the first only); default every one. */
  when?: string;
}

/**
 * The strace command line (strace's path and its options; the command follows after `--`) that
 * fails `fault.syscalls` with `fault.errno` on `fault.path` only. Syscall
 * names are marked optional (`?`), so a name this architecture lacks (say
 * `pwritev`) is skipped rather than refused.
 */
export function straceFaultArgs(
  support: Extract<StraceSupport, { usable: true }>,
  fault: PathFault,
): string[] {
  const when = fault.when === undefined ? "" : `:when=${fault.when}`;
  const trace = fault.syscalls
    .split(",")
    .map((name) => `?${name}`)
    .join(",");
  return [
    support.path,
    "-f",
    "-qq",
    "-o",
    "/dev/null",
    "-P",
    fault.path,
    "-e",
    `trace=${trace}`,
    "-e",
    `inject=${fault.syscalls}:error=${fault.errno}${when}`,
  ];
}

/**
 * Runs `command` (an executable and its arguments) under strace with one
 * injected fault on one file, synchronously, and returns what it printed.
 * For adapters' own tests of a single fault (an open, a close); the crash
 * suite's sampled faults go through `registerSyscallFaultConformance`.
 */
export function runWithFault(
  support: Extract<StraceSupport, { usable: true }>,
  fault: PathFault,
  command: readonly string[],
  timeoutMs = 60_000,
): { status: number | null; stdout: string; stderr: string } {
  const [strace, ...options] = straceFaultArgs(support, fault);
  const run = spawnSync(strace as string, [...options, "--", ...command], {
    encoding: "utf8",
    timeout: timeoutMs,
  });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
