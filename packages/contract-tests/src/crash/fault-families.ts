/**
 * The syscalls the syscall-fault scenarios make fail, grouped by what they do
 * to a file, each group with the errors a real disk gives for it.
 */
export interface FaultFamily {
  /** Short name, used in test names and summaries. */
  name: string;
  /** Linux x86-64/arm64 syscall names as strace spells them. */
  syscalls: readonly string[];
  errnos: readonly string[];
  /**
   * Whether a failure must reach the writer. A failed remove only leaves a
   * file behind (an obsolete log, a reclaimed sidecar) and a failed mkdir of
   * a directory that exists changes nothing: the backend may ignore those,
   * as long as nothing acknowledged is lost.
   */
  mustReport: boolean;
  /**
   * For a group whose failures must reach the writer, the calls that may
   * fail quietly all the same, with the reason (from the call as strace
   * printed it).
   */
  quietlyFailing?: (call: string) => string | undefined;
}

export const FAULT_FAMILIES: readonly FaultFamily[] = [
  {
    name: "write",
    syscalls: ["write", "pwrite64", "writev", "pwritev", "pwritev2"],
    errnos: ["EIO", "ENOSPC"],
    mustReport: true,
  },
  {
    name: "sync",
    syscalls: ["fsync", "fdatasync", "sync_file_range"],
    errnos: ["EIO", "ENOSPC"],
    mustReport: true,
  },
  {
    name: "rename",
    syscalls: ["rename", "renameat", "renameat2", "link", "linkat"],
    errnos: ["EIO", "ENOSPC"],
    mustReport: true,
  },
  {
    name: "open",
    syscalls: ["openat", "open", "creat"],
    errnos: ["EIO", "ENOSPC", "EMFILE"],
    mustReport: true,
    // Listing a directory (opendir) may serve only cleanup (LevelDB lists its directory to
    // delete obsolete files). When the listing mattered, as in recovery, the reopen checks
    // catch whatever it missed.
    quietlyFailing: (call) =>
      call.includes("O_DIRECTORY") ? "a directory listing may fail quietly" : undefined,
  },
  {
    name: "truncate",
    syscalls: ["ftruncate", "truncate", "fallocate"],
    errnos: ["EIO", "ENOSPC"],
    mustReport: true,
  },
  {
    name: "mkdir",
    syscalls: ["mkdir", "mkdirat"],
    errnos: ["EIO", "ENOSPC"],
    // Opening an existing storage "ensures" its directory; Node's recursive mkdir then
    // succeeds when the directory exists whatever mkdir said. A directory that really
    // is missing fails every file operation in it, so nothing can be acknowledged.
    mustReport: false,
  },
  {
    name: "remove",
    syscalls: ["unlink", "unlinkat", "rmdir"],
    errnos: ["EIO", "EBUSY"],
    mustReport: false,
  },
];

/** Every syscall of every family: what the calibration runs trace. */
export const FAULT_SYSCALLS: readonly string[] = FAULT_FAMILIES.flatMap(
  (family) => family.syscalls,
);

export function familyOf(syscall: string): FaultFamily | undefined {
  return FAULT_FAMILIES.find((family) => family.syscalls.includes(syscall));
}
