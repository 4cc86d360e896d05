import type { ConversationId } from "../domain/ids.js";
import type { CallOptions, Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import { pendingApprovals, type PendingApproval } from "./approval.js";
import { LiveDoc } from "./live.js";
import { decided, TOOL_TASK } from "./tool-task.js";

/** A waiting call with the conversation it waits in (`harness.approvals()`). */
export interface WaitingApproval extends PendingApproval {
  readonly conversationId: ConversationId;
}

/** Tool tasks read per page while looking for waiting calls. */
const PAGE = 256;

/**
 * Every tool call waiting for a person's decision, in every conversation,
 * oldest first: a subagent's calls too, which wait in a child conversation
 * the application never opened. Read from the pending tool tasks in the
 * `approval` phase and their conversations' live slots.
 */
export async function waitingApprovals(
  session: Session,
  options?: CallOptions,
): Promise<WaitingApproval[]> {
  const waiting = new Map<ConversationId, Set<number>>();
  let cursor: Cursor | undefined;
  do {
    const page = await session.read.scanTasks(
      { kind: TOOL_TASK, status: "pending" },
      PAGE,
      cursor,
      options,
    );
    for (const task of page.items) {
      if (decided(task)) continue;
      let ids = waiting.get(task.conversationId);
      if (!ids) waiting.set(task.conversationId, (ids = new Set()));
      ids.add(task.id);
    }
    cursor = page.next;
  } while (cursor !== undefined);
  const out: WaitingApproval[] = [];
  for (const [conversationId, ids] of waiting) {
    const live = await session.snapshot(LiveDoc, conversationId);
    if (!live) continue;
    for (const pending of pendingApprovals(live))
      if (ids.has(pending.taskId)) out.push({ ...pending, conversationId });
  }
  return out.sort((a, b) => a.taskId - b.taskId);
}
