import type { TaskId } from "../domain/ids.js";
import type { Json, JsonObject } from "../domain/json.js";
import { TaskStateError } from "../domain/errors.js";
import type { ErrorInfo, TaskRecord, ToolCallPart, ToolResultMessage } from "../domain/records.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import { defineTask, type TaskDefinition } from "../tasks/define-task.js";
import type { TaskRuntime } from "../tasks/runtime.js";
import { AgentDoc, type AgentState } from "./agent.js";
import {
  afterTool,
  beforeTool,
  HOOK_FAILED,
  HOOK_INVALID,
  UNKNOWN_HOOKS,
  type Hooks,
} from "./hooks.js";
import { toolResultEntry } from "./entries.js";
import { holdsOutput, LiveDoc, type LiveToolSlot } from "./live.js";
import type { Tool } from "./tool.js";
import { toolApi } from "./tool-api.js";
import type { SubagentDeps } from "./subagent.js";
import { callTool, NOT_CALLED, type ToolCallOutcome } from "./tool-call.js";
import { boundedOutputText, type ToolOutputBound } from "./tool-output.js";

export const TOOL_TASK = "durably.tool";

/**
 * What a tool task is created with: the call, as the assistant entry holds
 * it, and for a `sequential` tool's later calls, the task of the call
 * before (this one waits until that one ends).
 */
export type ToolTaskInput = {
  toolCallId: string;
  toolName: string;
  arguments: JsonObject;
  after?: number;
  /** The call waits for a person's decision first (its tool's `approval` said so). */
  approval?: true;
};

/**
 * `approval`: the call waits for `conversation.approve` (the task stays
 * `pending` and is not reserved: it holds no concurrency slot). The
 * decision is stored into the checkpoint: `start` (approved) or `denied`.
 * `start`: not begun (a sequential call first waits, durably, for the call
 * before it: a `waiting` state whose checkpoint stays `start`).
 * `denied`: a person said no; the call ends with the denial as its result.
 * `running`: the intent commit of `attempt` is stored, its result is not.
 */
export type ToolCheckpoint =
  | { phase: "approval" }
  | { phase: "start"; approved?: true }
  | { phase: "denied"; reason?: string }
  | { phase: "running"; attempt: number };

/** Whether a tool task may run: not while it waits for a decision (`ready` of the definition). */
export function decided(task: TaskRecord): boolean {
  const checkpoint = (task.state as { checkpoint?: { phase?: unknown } }).checkpoint;
  return checkpoint?.phase !== "approval";
}

/** The error result a denied call gets (what the model reads); a blank reason says nothing, so the default stands in. */
export function deniedResult(input: ToolTaskInput, reason: string | undefined): ToolResultMessage {
  const why = reason === undefined || reason.trim() === "" ? "the call was not approved" : reason;
  return errorResult(input, `denied: ${why}`);
}

export interface ToolTaskDeps {
  readonly session: Session;
  readonly tools: ReadonlyMap<string, Tool>;
  /** How much streamed output a slot keeps. */
  readonly outputBound: Required<ToolOutputBound>;
  /** The hooks of a conversation with this configuration (absent: none). */
  readonly hooksFor?: (agent: AgentState) => readonly Hooks[] | { error: ErrorInfo };
  /** What `api.runConversation` needs (absent: tools cannot run subagents). */
  readonly subagents?: SubagentDeps;
}

/** A hook's failure, which the tool-result entry carries so the generation ends the run with it. */
const HOOK_CODES = new Set([HOOK_FAILED, HOOK_INVALID, UNKNOWN_HOOKS]);

/** The output a slot holds, with the marker line when some was cut. */
const slotOutput = (slot: LiveToolSlot | undefined): string =>
  slot ? boundedOutputText(slot.output, slot.outputCut) : "";

type ToolRuntime = TaskRuntime<ToolTaskInput, ToolCheckpoint>;

function callOf(input: ToolTaskInput): ToolCallPart {
  return {
    type: "toolCall",
    id: input.toolCallId,
    name: input.toolName,
    arguments: input.arguments,
  };
}

function errorResult(input: ToolTaskInput, content: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: input.toolCallId,
    toolName: input.toolName,
    content,
    isError: true,
  };
}

function soFar(output: string): string {
  return output === "" ? "No output was recorded." : `Output so far:\n${output}`;
}

/** The result an unsafe tool gets when a crash cut its call short. */
export function interruptedResult(input: ToolTaskInput, output: string): ToolResultMessage {
  return errorResult(
    input,
    `interrupted: "${input.toolName}" was running when the process stopped. It is not safe to rerun (replay: "unsafe"), so it may or may not have taken effect. ${soFar(output)}`,
  );
}

/** The result of a terminal tool task, whatever ended it; `slot` is its live slot as the end found it. */
function resultOf(
  task: TaskRecord,
  slot: LiveToolSlot | undefined,
): { message: ToolResultMessage; data: JsonObject } {
  const input = task.input as ToolTaskInput;
  const output = slotOutput(slot);
  const state = task.state;
  if (state.status !== "terminal")
    throw new Error(`internal: tool task ${task.id} is not terminal`);
  const outcome = state.outcome;
  switch (outcome.kind) {
    case "completed": {
      const value = outcome.value as {
        result: ToolResultMessage;
        attempt: number;
        interrupted?: boolean;
        denied?: boolean;
        details?: Json;
      };
      return {
        message: value.result,
        data: {
          toolCallId: input.toolCallId,
          attempt: value.attempt,
          ...(value.interrupted ? { interrupted: true } : {}),
          ...(value.denied ? { denied: true } : {}),
          ...(value.details !== undefined ? { details: value.details } : {}),
        },
      };
    }
    case "aborted":
      if (slot?.status === "approval")
        return {
          message: deniedResult(input, "the conversation was aborted before anyone decided"),
          data: { toolCallId: input.toolCallId, aborted: true, denied: true },
        };
      // Never begun (no intent commit, or it was withdrawn before `execute`): the tool did not run.
      if (slot?.status === "pending" && slot.attempt === 0)
        return {
          message: errorResult(
            input,
            `aborted: the tool call was aborted before it ran ("${input.toolName}" was not called).`,
          ),
          data: { toolCallId: input.toolCallId, aborted: true },
        };
      return {
        message: errorResult(
          input,
          `aborted: the tool call was aborted before it finished. ${soFar(output)}`,
        ),
        data: { toolCallId: input.toolCallId, aborted: true },
      };
    case "failed":
    case "faulted":
      return {
        message: errorResult(
          input,
          `error: the tool task ${outcome.kind} (${outcome.error.name}: ${outcome.error.message}). ${soFar(output)}`,
        ),
        data: {
          toolCallId: input.toolCallId,
          [outcome.kind]: true,
          ...(HOOK_CODES.has(outcome.error.code ?? "") ? { hookFailed: { ...outcome.error } } : {}),
        },
      };
    case "orphaned":
      return {
        message: errorResult(
          input,
          outcome.reason !== undefined
            ? `error: the tool call was abandoned: this process cannot run it (${outcome.reason}). ${soFar(output)}`
            : "error: the tool call was abandoned: the generation that made it ended first.",
        ),
        data: { toolCallId: input.toolCallId, orphaned: true },
      };
  }
}

/**
 * `durably.tool`: one tool call. The intent commit (checkpoint `running`)
 * is stored before `execute` runs; an abort (or a close) that comes before
 * `execute` is called withdraws it, and the tool does not run. A result
 * `execute` returns is stored even when abort was requested meanwhile (it
 * is what happened), unless the scheduler gave up on the call first
 * (`stopGraceMs` after the abort). The result is appended in the commit
 * that makes the task terminal, by `onTerminal`, whoever ends the task (its
 * own phase, an abort, a fault), together with the removal of its live
 * slot. A task found `running` after a crash reruns a `replay: "safe"` tool
 * and gives any other an `interrupted` result with the output stored so far.
 * A `sequential` tool's later call first waits (durably) for the call
 * before it to end. A call whose tool asks for approval is created in the
 * `approval` phase, not ready until `conversation.approve` stores the
 * decision; aborted meanwhile, it ends denied.
 */
export function createToolTask(deps: ToolTaskDeps): TaskDefinition<ToolTaskInput, ToolCheckpoint> {
  const { session, tools, outputBound, hooksFor } = deps;

  /** The result, when the conversation's configuration no longer offers the tool. */
  function notOffered(input: ToolTaskInput, offered: readonly string[]): ToolResultMessage {
    return errorResult(
      input,
      `error: the tool "${input.toolName}" is not available in this conversation (available: ${offered.map((n) => JSON.stringify(n)).join(", ") || "none"})`,
    );
  }

  /**
   * The abort (or a close) came before `execute` was called: the intent
   * commit is withdrawn (the checkpoint before it, the slot `pending` with
   * `slotAttempt`, its attempt before; its output, which only `execute`
   * writes, is as it was), and the phase ends with the abort reason. So an
   * abort records that the tool did not run (with the output of an attempt
   * a crash cut short), and a close leaves the call to run at the next open
   * instead of counting as interrupted.
   */
  async function withdraw(
    rt: ToolRuntime,
    before: ToolCheckpoint,
    slotAttempt: number,
  ): Promise<never> {
    try {
      await rt.commit(async (tx) => {
        const live = await tx.doc(LiveDoc, rt.task.conversationId);
        const slot = live.tools[String(rt.taskId)];
        if (slot) {
          slot.status = "pending";
          if (slot.attempt !== slotAttempt) slot.attempt = slotAttempt;
        }
        return before;
      });
    } catch (error) {
      // Past the abort's grace period the scheduler gave up on this call and recorded its end:
      // nothing is left to withdraw, and the give-up is what gets reported (as for a late result).
      if (!(rt.signal.aborted && error instanceof TaskStateError)) throw error;
    }
    throw rt.signal.reason;
  }

  async function execute(rt: ToolRuntime, attempt: number): Promise<void> {
    const task = rt.task;
    const before = task.checkpoint;
    const key = String(task.id);
    const conversationId = task.conversationId;
    // Read outside the commit: opening a document in a commit creates it, and most conversations have none.
    const agent = (await session.snapshot(AgentDoc, conversationId)) ?? {};
    let slotAttempt = 0; // the slot's attempt before the intent commit, which a withdrawal puts back
    const started = await rt.commit(async (tx) => {
      if (agent.tools !== undefined && !agent.tools.includes(task.input.toolName))
        return {
          status: "terminal",
          outcome: {
            kind: "completed",
            value: { result: notOffered(task.input, agent.tools), attempt },
          },
        };
      const live = await tx.doc(LiveDoc, conversationId);
      const slot = live.tools[key];
      if (slot) {
        slotAttempt = slot.attempt;
        slot.status = "running";
        // A crashed attempt's output stays until this attempt writes its own (`toolApi` replaces it
        // then), so a rerun withdrawn before `execute`, or killed before it writes, still reports
        // the output recorded so far: cleared here, a crash right after this commit would lose it
        // for good. The slot's attempt moves with its output (a stream restarts a call's output
        // when the attempt changes), so it says whose output the slot shows.
        if (!holdsOutput(slot)) slot.attempt = attempt;
      }
      return { phase: "running", attempt };
    });
    if (started.record.state.status === "terminal") return;
    if (rt.signal.aborted) return withdraw(rt, before, slotAttempt); // no hooks for a call whose abort has arrived
    const hooks = hooksFor?.(agent) ?? [];
    const failed = (error: ErrorInfo) =>
      rt.commit(() => ({ status: "terminal", outcome: { kind: "failed", error } }));
    if ("error" in hooks) return void (await failed(hooks.error));
    const call = callOf(task.input);
    const context = { conversationId, toolCallId: call.id, toolName: call.name, attempt };
    const verdict = await beforeTool(hooks, call, context);
    if (verdict && "error" in verdict) return void (await failed(verdict.error));
    const { api, output } = toolApi(session, rt, attempt, outputBound, deps.subagents);
    let called: ToolCallOutcome | typeof NOT_CALLED;
    try {
      called = verdict
        ? { message: errorResult(task.input, `blocked: ${verdict.block}`) }
        : await callTool(tools, call, api);
    } finally {
      await output.settle().catch(() => undefined); // its own failure surfaces through the session
    }
    // Aborted before `execute` would be called (while the hooks ran, or the owner's abort arrived): it was not.
    if (called === NOT_CALLED) return withdraw(rt, before, slotAttempt);
    let outcome = called;
    if (!verdict) {
      const after = await afterTool(hooks, call, outcome, context);
      if ("error" in after) return void (await failed(after.error));
      outcome = after.outcome;
    }
    try {
      await rt.commit(() => ({
        status: "terminal",
        outcome: {
          kind: "completed",
          value: {
            result: outcome.message,
            attempt,
            ...(outcome.details !== undefined ? { details: outcome.details } : {}),
          },
        },
      }));
    } catch (error) {
      // Returned after the abort's grace period: the scheduler gave up on this call (its runtime is
      // revoked) and the abort has recorded the result, so this one has nowhere to go.
      if (rt.signal.aborted && error instanceof TaskStateError) throw rt.signal.reason;
      throw error;
    }
  }

  return defineTask<ToolTaskInput, ToolCheckpoint>({
    name: TOOL_TASK,
    version: 1,
    initial: (input) => (input.approval ? { phase: "approval" } : { phase: "start" }),
    ready: decided,
    phases: {
      // Not ready while it waits; reserved only when aborted, and then its abort handler runs instead.
      approval: (task) => {
        throw new Error(
          `internal: tool task ${task.id} ran while waiting for approval of call ${task.input.toolCallId}`,
        );
      },
      denied: async (task, rt) => {
        const { reason } = task.checkpoint as Extract<ToolCheckpoint, { phase: "denied" }>;
        await rt.commit(() => ({
          status: "terminal",
          outcome: {
            kind: "completed",
            value: { result: deniedResult(task.input, reason), attempt: 0, denied: true },
          },
        }));
      },
      start: async (task, rt) => {
        const after = task.input.after;
        if (after !== undefined) {
          const before = await rt.getTask(after as TaskId);
          if (before && before.state.status !== "terminal") {
            await rt.commit(() => ({
              status: "waiting",
              checkpoint: { phase: "start" },
              on: [after as TaskId],
              policy: "allSettled",
            }));
            return;
          }
        }
        return execute(rt, 1);
      },
      // Only reached after a crash: the intent of `attempt` is stored, its result is not.
      running: async (task, rt) => {
        const previous = (task.checkpoint as { attempt: number }).attempt;
        if (tools.get(task.input.toolName)?.replay === "safe") return execute(rt, previous + 1);
        await rt.commit(async (tx) => {
          const live = await tx.doc(LiveDoc, task.conversationId);
          const output = slotOutput(live.tools[String(task.id)]);
          return {
            status: "terminal",
            outcome: {
              kind: "completed",
              value: {
                result: interruptedResult(task.input, output),
                attempt: previous,
                interrupted: true,
              },
            },
          };
        });
      },
    },
    abort: () => "the conversation was aborted",
    onTerminal: async (tx: Transaction, task: TaskRecord) => {
      const live = await tx.doc(LiveDoc, task.conversationId);
      const key = String(task.id);
      const slot = live.tools[key];
      const { message, data } = resultOf(task, slot);
      await tx.appendEntry(task.conversationId, toolResultEntry(task.id, message, data));
      if (live.tools[key]) delete live.tools[key];
    },
  });
}
