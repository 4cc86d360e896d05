import type { PreparedTool } from "./system-setup.mjs";

/** The block `npm test` prints last (a single line when nothing was skipped). */
export function formatSummary(statuses: readonly PreparedTool[]): string;

/** The exit code of `npm test` (the check run's; with `requireAll`, a skipped suite fails a passing run) and, when a skip decided it, why. */
export function finalExit(
  checkCode: number,
  statuses: readonly PreparedTool[],
  requireAll: boolean,
): { code: number; why?: string };
