import type { CrashScenario } from "./scripts.js";

/** Environment variable carrying the harness child's config as JSON. */
export const HARNESS_CHILD_ENV = "DURABLY_HARNESS_CHILD";

export interface HarnessChildConfig {
  /** URL of the module exporting `open(path)`. */
  childModule: string;
  path: string;
  scenario: CrashScenario;
}

/** What the child reports, each with its `Date.now()`. Tagged so other IPC traffic is ignored. */
export type HarnessChildMessage = { durablyHarness: 1; at: number } & (
  | { type: "ready" }
  | { type: "submitted"; submissionId: number }
  /** A watch frame showed this much streamed text (published, not necessarily stored). */
  | { type: "text"; length: number }
  | { type: "tool-running"; name: string; attempt: number }
  | { type: "failed"; error: string }
);

export function isHarnessChildMessage(value: unknown): value is HarnessChildMessage {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { durablyHarness?: unknown }).durablyHarness === 1
  );
}
