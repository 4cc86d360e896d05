import type { TaskRecord } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import { COMPACTION_TASK } from "./compaction-task.js";
import { GENERATION_TASK } from "./generation-task.js";
import { LiveDoc } from "./live.js";
import { TOOL_TASK } from "./tool-task.js";

const PAGE = 256;

/**
 * What `Harness.open` repairs before anything runs: a harness task still
 * `running` was run by a process that is gone, so it returns to `pending`
 * (checkpoint and abort mark kept; the scheduler would do the same when it
 * starts) and the live slot of such a tool call says `pending` again. One
 * commit; nothing when there is nothing to repair. Returns the tasks moved.
 */
export async function reconcile(session: Session): Promise<number> {
  return session.commit(async (tx) => {
    const stale: TaskRecord[] = [];
    for (const kind of [GENERATION_TASK, TOOL_TASK, COMPACTION_TASK]) {
      let cursor: Cursor | undefined;
      do {
        const page = await tx.scanTasks({ kind, status: "running" }, PAGE, cursor);
        stale.push(...page.items);
        cursor = page.next;
      } while (cursor !== undefined);
    }
    for (const task of stale) {
      if (task.state.status !== "running") continue;
      await tx.putTask({
        ...task,
        state: { status: "pending", checkpoint: task.state.checkpoint },
      });
    }
    for (const task of stale) {
      if (task.kind !== TOOL_TASK) continue;
      const live = await tx.doc(LiveDoc, task.conversationId);
      const slot = live.tools[String(task.id)];
      if (slot && slot.status !== "pending") slot.status = "pending";
    }
    return stale.length;
  });
}
