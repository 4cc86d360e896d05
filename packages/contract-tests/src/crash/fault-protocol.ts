/**
 * Messages between the syscall-fault scenario (parent) and its child runner,
 * which runs under strace. Tagged `durablyCrash: 1` like the kill suite's, so
 * anything else on the IPC channel is ignored.
 */
import type { BatchTag } from "./observed-storage.js";
import type { CommitterIds } from "./protocol.js";

/** Environment variable carrying the child's `FaultChildConfig` as JSON. */
export const FAULT_CHILD_CONFIG_ENV = "DURABLY_FAULT_CHILD";

export interface FaultChildConfig {
  /** URL of the module exporting `open(path)`. */
  childModule: string;
  path: string;
  committer: CommitterIds;
  /** Step commits to get acknowledged before closing (fewer when commits fail). */
  steps: number;
  /**
   * File the child writes its phase markers to (`O` open, `o` opened,
   * `B<attempt>`/`E<attempt>` around each commit, `C`/`c` around close), so
   * the strace log says which phase every traced call belongs to.
   */
  markerPath: string;
  /** The marker writes use a syscall that is not being injected, so they do not move strace's count. */
  markerSyscall: "write" | "pwrite64";
}

export type FaultChildMessage =
  | { durablyCrash: 1; type: "hello"; pid: number }
  | { durablyCrash: 1; type: "opened"; nextStep: number }
  | { durablyCrash: 1; type: "open-failed"; error: string }
  /** Sent (and flushed) before each `storage.commit` call, as in the kill suite. */
  | { durablyCrash: 1; type: "intent"; batches: BatchTag[] }
  | {
      durablyCrash: 1;
      type: "acknowledged";
      attempt: number;
      step: number;
      entryId: number;
      seq: number | undefined;
    }
  | {
      durablyCrash: 1;
      type: "rejected";
      attempt: number;
      step: number;
      error: string;
      /** The step's batch reached `storage.commit` before the commit failed. */
      announced: boolean;
      sessionFailed: boolean;
    }
  | { durablyCrash: 1; type: "closed"; error: string | undefined }
  | { durablyCrash: 1; type: "unhandled"; error: string };

export function isFaultChildMessage(value: unknown): value is FaultChildMessage {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { durablyCrash?: unknown }).durablyCrash === 1 &&
    typeof (value as { type?: unknown }).type === "string"
  );
}

/** An error with its cause chain on one line: what the writer was told. */
export function describeErrorChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      parts.push(
        `${current.name}${typeof code === "string" ? ` (${code})` : ""}: ${current.message}`,
      );
      current = current.cause;
    } else {
      // A thrown non-Error: JSON shows an object's content, where String() would give "[object Object]".
      parts.push(
        typeof current === "string" ? current : (JSON.stringify(current) ?? typeof current),
      );
      break;
    }
  }
  return parts.join(" <- ");
}
