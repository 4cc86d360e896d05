/**
 * Messages between the crash suite (parent) and its child runner, sent over
 * the Node IPC channel. Every message carries `durablyCrash: 1` so anything
 * else on the channel (a loader's own traffic) is ignored.
 */

/** Environment variable carrying the child's `ChildConfig` as JSON. */
export const CHILD_CONFIG_ENV = "DURABLY_CRASH_CHILD";

export interface CommitterIds {
  conversationId: number;
  taskId: number;
}

export interface ChildConfig {
  /** URL of the module exporting `open(path)`. */
  childModule: string;
  path: string;
  committers: CommitterIds[];
  /** `loop`: every committer commits until killed. `command`: commit only when told, else idle. */
  mode: "loop" | "command";
}

/** What one step commit wrote, as acknowledged by `session.commit` resolving. */
export interface Ack {
  committer: number;
  step: number;
  entryId: number;
  /** Seq storage reported for the step's batch. */
  seq: number | undefined;
}

export type ChildMessage =
  | { durablyCrash: 1; type: "ready"; pid: number; nextSteps: number[] }
  /**
   * Sent (and flushed to the channel) before each `storage.commit` call: the
   * `[committer, step]` of each batch in call order, `null` for a batch that
   * is not a step commit.
   */
  | { durablyCrash: 1; type: "intent"; batches: ([number, number] | null)[] }
  | ({ durablyCrash: 1; type: "ack" } & Ack)
  | { durablyCrash: 1; type: "done" }
  | { durablyCrash: 1; type: "failed"; error: string };

export type ParentMessage = { durablyCrash: 1; type: "commit"; count: number };

function isTagged(value: unknown): value is { durablyCrash: 1; type: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { durablyCrash?: unknown }).durablyCrash === 1
  );
}

export function isChildMessage(value: unknown): value is ChildMessage {
  return isTagged(value);
}

export function isParentMessage(value: unknown): value is ParentMessage {
  return isTagged(value) && value.type === "commit";
}
