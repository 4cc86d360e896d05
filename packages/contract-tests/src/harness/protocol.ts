import type { CrashScenario } from "./scripts.js";

/** Environment variable carrying the harness child's config as JSON. */
export const HARNESS_CHILD_ENV = "DURABLY_HARNESS_CHILD";

export interface HarnessChildConfig {
  /** URL of the module exporting `open(path)`. */
  childModule: string;
  /** URL of a module exporting `createModel(script)` (a `HarnessModelFactory`); default ScriptedModel. */
  modelModule?: string;
  path: string;
  scenario: CrashScenario;
  /** The scenario's script id (the parent resumes with the same). */
  scriptId: string;
}

/** What the child reports, each with its `Date.now()`. Tagged so other IPC traffic is ignored. */
export type HarnessChildMessage = { durablyHarness: 1; at: number } & (
  | { type: "ready" }
  | { type: "submitted"; submissionId: number }
  /** A watch frame showed this much streamed text (published, not necessarily stored). */
  | { type: "text"; length: number }
  | { type: "tool-running"; name: string; attempt: number }
  /** `live.retry` is stored: the generation waits to make `attempt` at `retryAt`. */
  | { type: "retry-waiting"; attempt: number; retryAt: number }
  /** A watch frame showed this much of the compaction's streamed summary. */
  | { type: "summary"; length: number }
  /** The "book" tool is inside its second `api.commit` callback, where it stays. */
  | { type: "committing" }
  /** A watch frame showed the "deploy" call waiting for approval. */
  | { type: "approval-pending"; toolCallId: string }
  /** The "approval-retry" child stored its decision (`approve` resolved). */
  | { type: "approved"; submissionId: number }
  /** The "subagent" child's tool created its child conversation (the helper now streams). */
  | { type: "subagent-created"; conversationId: number }
  | { type: "failed"; error: string }
);

export function isHarnessChildMessage(value: unknown): value is HarnessChildMessage {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { durablyHarness?: unknown }).durablyHarness === 1
  );
}
