import type { StraceSupport } from "./strace-support.js";

/** One injected fault: strace makes the `when`-th matching call of `syscall`, in each thread, fail with `errno`. */
export interface Injection {
  syscall: string;
  errno: string;
  when: number;
}

export interface TraceRequest {
  /** Where strace writes its log. */
  log: string;
  /** Syscalls to log. Names strace does not know on this architecture are ignored (`?name`). */
  syscalls: readonly string[];
  /** Only calls on these paths (or descriptors of them) are logged and counted; none: every call. */
  paths?: readonly string[];
  inject?: Injection;
}

/**
 * strace's options for one traced child: follow threads and forks (`-f`),
 * decode descriptors to paths (`-y`), write buffers cut at 16 bytes, no
 * signal or exit chatter.
 */
export function straceArgs(
  support: Extract<StraceSupport, { usable: true }>,
  request: TraceRequest,
): string[] {
  const args = ["-f"];
  if (support.seccompBpf) args.push("--seccomp-bpf");
  args.push("-qq", "-y", "-s", "16", "-e", "signal=none", "-o", request.log);
  args.push("-e", `trace=${request.syscalls.map((name) => `?${name}`).join(",")}`);
  if (request.inject !== undefined) {
    const { syscall, errno, when } = request.inject;
    if (!(Number.isSafeInteger(when) && when >= 1 && when <= 65535))
      throw new RangeError(`strace counts calls from 1 to 65535, got when=${when}`);
    args.push("-e", `inject=${syscall}:error=${errno}:when=${when}`);
  }
  for (const path of request.paths ?? []) args.push("-P", path);
  return args;
}
