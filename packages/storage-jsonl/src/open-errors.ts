import { StorageIOError } from "@durably/core";
import { relative } from "node:path";

/** The fields Node's file-system errors carry (`SystemError`). */
interface SystemError extends Error {
  code: string;
  syscall: string;
  path?: string;
}

function isSystemError(error: unknown): error is SystemError {
  const e = error as Partial<SystemError> | null;
  return (
    error instanceof Error &&
    typeof e?.code === "string" &&
    /^E[A-Z0-9]+$/.test(e.code) &&
    typeof e.syscall === "string"
  );
}

/**
 * An operating-system failure while opening (a read, a repair's write,
 * rename or fsync: EIO, ENOSPC, EACCES…) as the typed `StorageIOError`,
 * naming the file relative to the storage directory and the call that
 * failed, with the original as its cause. Open changes nothing it has not
 * finished, so the storage can be opened again once the cause is fixed.
 * Everything else (Durably's own errors, bad options) passes through.
 */
export function openFailure(error: unknown, directory: string): unknown {
  if (!isSystemError(error)) return error;
  const file = error.path === undefined ? undefined : relative(directory, error.path) || ".";
  return new StorageIOError(
    `JSONL storage ${directory}: ${error.syscall} failed${file === undefined ? "" : ` on ${file}`} while opening (${error.code}); nothing confirmed is lost, open again once the cause is fixed`,
    file === undefined ? {} : { file },
    { cause: error },
  );
}
