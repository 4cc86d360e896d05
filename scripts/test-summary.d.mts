import type { PreparedTool } from "./system-setup.mjs";

/** The block `npm test` prints last (a single line when nothing was skipped). */
export function formatSummary(statuses: readonly PreparedTool[]): string;
