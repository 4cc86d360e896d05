/** A system tool some test suites need beyond node_modules. */
export type ToolName = "build-tools" | "chromium" | "postgresql" | "strace";

export type ToolStatus =
  | { name: ToolName; available: true; path?: string; detail?: string; installed?: string[] }
  | {
      name: ToolName;
      available: false;
      /** Why it is missing (and why it could not be installed). */
      reason: string;
      /** The command that enables it on this machine. */
      enable: string;
    };

/**
 * Whether a test can use `name`, and if not why and how to enable it. Reads
 * what `npm test` found (DURABLY_SYSTEM_TOOLS); probes the machine when the
 * test runs outside `npm test`.
 */
export function systemTool(name: ToolName): ToolStatus;

/** The environment variable `npm test` passes the statuses in. */
export const STATUS_ENV: string;
