/** What the killed agent child tells its parent over IPC, in this order. */
export type AgentChildMessage =
  | { type: "submitted"; submissionId: number }
  /** The `add` tool is running (this attempt) and now waits to be killed. */
  | { type: "tool-running"; attempt: number }
  | { type: "failed"; error: string };

export function isAgentChildMessage(value: unknown): value is AgentChildMessage {
  const type = (value as { type?: unknown } | null)?.type;
  return type === "submitted" || type === "tool-running" || type === "failed";
}
