import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { SyscallFaultOptions } from "./types.js";

/**
 * One fresh directory per traced run: `<root>/storage` for the backend,
 * `<root>/fault-marks` for the child's phase markers and `<root>/strace.log`.
 * `root` is a real path (no symlink): strace compares the paths it decodes
 * with `-P` paths as strings.
 */
export interface FaultWorkspace {
  root: string;
  path: string;
  markerPath: string;
  log: string;
}

export function keepWorkspaces(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    env.CRASH_FAULT_KEEP !== undefined &&
    env.CRASH_FAULT_KEEP !== "" &&
    env.CRASH_FAULT_KEEP !== "0"
  );
}

export async function withFaultWorkspace<T>(
  run: (workspace: FaultWorkspace) => Promise<T>,
): Promise<T> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "durably-fault-")));
  try {
    return await run({
      root,
      path: join(root, "storage"),
      markerPath: join(root, "fault-marks"),
      log: join(root, "strace.log"),
    });
  } finally {
    // CRASH_FAULT_KEEP=1 keeps every run's directory (storage, strace.log, markers) to look at.
    if (!keepWorkspaces()) await rm(root, { recursive: true, force: true });
  }
}

/** The backend's own paths in this workspace, as the adapter declares them (absolute). */
export function declaredPaths(options: SyscallFaultOptions, workspace: FaultWorkspace): string[] {
  return options.files(workspace.path).map((file) => file.replace(/\/+$/, ""));
}

/** Whether `file` is one of the backend's: a declared path or inside a declared directory, and not ignored. */
export function isOwn(
  file: string,
  declared: readonly string[],
  options: SyscallFaultOptions,
  workspace: FaultWorkspace,
): boolean {
  if (file === workspace.markerPath || file === workspace.log) return false;
  if (!declared.some((own) => file === own || file.startsWith(`${own}/`))) return false;
  return options.ignore?.(file) !== true;
}

export function toRelative(workspace: FaultWorkspace, file: string): string {
  return relative(workspace.root, file);
}

export function fromRelative(workspace: FaultWorkspace, file: string): string {
  return join(workspace.root, file);
}
