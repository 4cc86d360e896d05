import type { ConversationId, TaskId } from "../domain/ids.js";
import type { ToolCallPart } from "../domain/records.js";
import type { Draft } from "../session/draft.js";
import type { Transaction } from "../session/transaction.js";
import type { TaskDefinition } from "../tasks/define-task.js";
import type { ResolvedAgent } from "./agent.js";
import { approvalNeeded } from "./approval.js";
import type { LiveState, LiveToolSlot } from "./live.js";
import type { ToolCheckpoint, ToolTaskInput } from "./tool-task.js";

/** Whether each call of a turn asks for approval (its tool's `approval`), with the time it asked. */
export type TurnApprovals = {
  asks: Awaited<ReturnType<typeof approvalNeeded>>[];
  requestedAt: number;
};

/** Asks each call's tool whether it needs approval: before the commit (the function may be async); a rerun asks again. */
export async function turnApprovals(
  agent: ResolvedAgent,
  calls: readonly ToolCallPart[],
  conversationId: ConversationId,
  now: number,
): Promise<TurnApprovals> {
  const offered = new Map(agent.tools.map((t) => [t.name, t]));
  const asks = await Promise.all(
    calls.map((call) => approvalNeeded(offered.get(call.name), call, conversationId)),
  );
  return { asks, requestedAt: now };
}

/**
 * Inside the commit that stores a model turn: one tool task per call,
 * owned by the generation, with its live slot. A `sequential` tool's later
 * call waits for the one before; a call that needs approval is created
 * waiting for it (slot status "approval"). Returns the tasks, in call order.
 */
export async function createToolCalls(
  tx: Transaction,
  toolTask: TaskDefinition<ToolTaskInput, ToolCheckpoint>,
  generationTaskId: TaskId,
  agent: ResolvedAgent,
  calls: readonly ToolCallPart[],
  approvals: TurnApprovals,
  live: Draft<LiveState>,
): Promise<TaskId[]> {
  const sequential = new Set(agent.tools.filter((t) => t.sequential).map((t) => t.name));
  const on: TaskId[] = [];
  const lastOf = new Map<string, TaskId>();
  for (const [i, call] of calls.entries()) {
    const before = sequential.has(call.name) ? lastOf.get(call.name) : undefined;
    const asks = approvals.asks[i];
    const toolTaskId = await tx.createTask(
      toolTask,
      {
        toolCallId: call.id,
        toolName: call.name,
        arguments: call.arguments,
        ...(before !== undefined ? { after: before } : {}),
        ...(asks?.needed ? { approval: true as const } : {}),
      },
      { ownership: { kind: "task", taskId: generationTaskId } },
    );
    if (sequential.has(call.name)) lastOf.set(call.name, toolTaskId);
    const slot: LiveToolSlot = {
      taskId: toolTaskId,
      toolCallId: call.id,
      toolName: call.name,
      status: asks?.needed ? "approval" : "pending",
      attempt: 0,
      output: "",
      ...(asks?.needed
        ? {
            approval: {
              arguments: call.arguments,
              requestedAt: approvals.requestedAt,
              ...(asks.note !== undefined ? { note: asks.note } : {}),
            },
          }
        : {}),
    };
    live.tools[String(toolTaskId)] = slot;
    on.push(toolTaskId);
  }
  return on;
}
