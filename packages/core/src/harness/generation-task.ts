import type { SubmissionId, TaskId } from "../domain/ids.js";
import type { AssistantMessage, ErrorInfo, SubmissionRecord } from "../domain/records.js";
import type { Session } from "../session/session.js";
import { defineTask, type TaskDefinition } from "../tasks/define-task.js";
import type { TaskRuntime } from "../tasks/runtime.js";
import { AgentDoc, resolveAgent, type AgentDefaults, type ResolvedAgent } from "./agent.js";
import type { CompactionReason } from "./compaction.js";
import {
  compactionResult,
  type CompactionCheckpoint,
  type CompactionInput,
} from "./compaction-task.js";
import { deriveContext } from "./context.js";
import { lastInputTokens, loadContextEntries } from "./context-load.js";
import { assistantEntry } from "./entries.js";
import { afterResponse, beforeRequest, toolHookFailure } from "./hooks.js";
import { LiveDoc } from "./live.js";
import type { ModelError, ModelRequest } from "./model.js";
import { callModel, generationProgress, type CallEnd } from "./model-call.js";
import type { GenerationInput } from "./placement.js";
import { retryDelay, type RetryPolicy } from "./retry-policy.js";
import { finishRun } from "./run-settlement.js";
import { createToolCalls, turnApprovals } from "./tool-calls.js";
import { steeredRecords, takeSteered } from "./steering.js";
import { InboxDoc } from "./inbox.js";
import type { ToolCheckpoint, ToolTaskInput } from "./tool-task.js";
import { costOf, recordUsage } from "./usage.js";

export const GENERATION_TASK = "durably.generation";

/** The failure that made a generation wait, as its checkpoint and the live view keep it. */
export type RetryCause = { message: string; code?: string; kind?: string };

/**
 * One model call per round, retried on retryable failures; a round with
 * tool calls waits for their tasks, then the next round runs.
 * - `stream`: call the model (`attempt` of the round; absent means 1);
 * - `retry`: attempt `attempt` starts at `retryAt` (session clock), after
 *   the failure `error`. Committed before the wait, so a process killed
 *   during it resumes the wait and counts the attempts already made.
 * `compacted`: this round already compacted the conversation (once per
 * round, whether for the threshold or after an overflow). `overflow`: the
 * call that the compaction `task` was for failed with this error; if the
 * compaction did not compact, the run ends with that error (calling again
 * would fail the same way).
 */
export type GenerationCheckpoint =
  | {
      phase: "stream";
      round: number;
      attempt?: number;
      compacted?: boolean;
      overflow?: { task: number; error: ModelErrorInfo };
    }
  | {
      phase: "retry";
      round: number;
      attempt: number;
      retryAt: number;
      error: RetryCause;
      compacted?: boolean;
    };

/** How automatic compaction behaves (checked `settings.compaction`). */
export interface CompactionPolicy {
  /** Compact when the last request passed the threshold, and once after an overflow. */
  readonly auto: boolean;
  /** The fraction of the model's `contextWindow` past which a conversation is compacted. */
  readonly threshold: number;
  /** Turns an automatic compaction keeps as they are. */
  readonly keepLastTurns: number;
}

export interface GenerationDeps {
  readonly session: Session;
  /** The registry (models, tools) and the harness's instructions and settings. */
  readonly defaults: AgentDefaults;
  readonly toolTask: TaskDefinition<ToolTaskInput, ToolCheckpoint>;
  readonly compactionTask: TaskDefinition<CompactionInput, CompactionCheckpoint>;
  readonly compaction: CompactionPolicy;
  readonly retry: RetryPolicy;
  /** For the retry jitter (tests pin it). */
  readonly random?: () => number;
}

type Runtime = TaskRuntime<GenerationInput, GenerationCheckpoint>;

/** What a failed model call's outcome stores (the submission's `detail`). */
type ModelErrorInfo = ErrorInfo & {
  retryable?: boolean;
  retryAfterMs?: number;
  kind?: string;
  attempts?: number;
};

function errorInfo(error: ModelError, attempts: number, note = ""): ModelErrorInfo {
  const { message, code, ...rest } = error;
  return {
    name: "ModelError",
    message: `${message}${note}`,
    ...(code !== undefined ? { code } : {}),
    ...rest,
    attempts,
  };
}

/** Milliseconds as exactly as given (never rounded, so two values compare as they read): whole seconds as `N s`. */
function exactly(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function causeOf(error: ModelError): RetryCause {
  return {
    message: error.message,
    ...(error.code !== undefined ? { code: error.code } : {}),
    ...(error.kind !== undefined ? { kind: error.kind } : {}),
  };
}

/**
 * `durably.generation`: answers one submission. Each round resolves the
 * conversation's agent (model, tools, instructions, settings: a name the
 * harness lacks ends the run), renders the context, compacts it first when
 * the last request passed the model's threshold, calls the model (partials
 * go to `durably.live` as deferred commits), then in ONE commit appends the
 * assistant entry, adds its usage to the ledger, creates one tool task per
 * call with its live slot (a call whose tool asks for approval is created
 * waiting for it, slot status "approval") and waits on them. Inputs
 * steered into the run join before a model call (after the tool results);
 * `beforeRequest` and `afterResponse` hooks run around the call, a failing
 * one ending the run. A round without calls (and no steered input) ends the
 * task; `onTerminal` settles the submission (and the steered ones) and
 * places the next queued input, in that same commit. A retryable failure commits a `retry`
 * checkpoint and waits; an overflow compacts once, then calls again; a
 * final failure ends the task `failed`.
 */
export function createGenerationTask(
  deps: GenerationDeps,
): TaskDefinition<GenerationInput, GenerationCheckpoint> {
  const { session, defaults, toolTask, compactionTask, compaction, retry } = deps;
  const random = deps.random ?? Math.random;

  /** The commit that ends the run `failed` with the model's error (keeping what streamed, calls left out). */
  async function fail(rt: Runtime, end: CallEnd | undefined, error: ModelErrorInfo): Promise<void> {
    const conversationId = rt.task.conversationId;
    await rt.commit(async (tx) => {
      const content = end?.draft.withoutCalls() ?? [];
      if (content.length > 0)
        await tx.appendEntry(
          conversationId,
          assistantEntry(rt.taskId, { role: "assistant", content, stopReason: "error" }),
        );
      return { status: "terminal", outcome: { kind: "failed", error } };
    });
  }

  /** Compacts before this round's model call: a child task the generation waits for (durably). */
  async function compactFirst(
    rt: Runtime,
    reason: CompactionReason,
    agent: ResolvedAgent,
    attempt: number,
    overflow?: ModelErrorInfo,
  ): Promise<void> {
    const conversationId = rt.task.conversationId;
    const { round } = rt.task.checkpoint;
    await rt.commit(async (tx) => {
      const live = await tx.doc(LiveDoc, conversationId);
      const taskId = await tx.createTask(
        compactionTask,
        { reason, model: agent.model.name, keepLastTurns: compaction.keepLastTurns },
        { ownership: { kind: "task", taskId: rt.taskId } },
      );
      live.generation = null;
      live.compaction = { taskId, reason, text: "" };
      return {
        status: "waiting",
        checkpoint: {
          phase: "stream",
          round,
          attempt,
          compacted: true,
          ...(overflow ? { overflow: { task: taskId, error: overflow } } : {}),
        },
        on: [taskId],
        policy: "allSettled",
      };
    });
  }

  /** Why the compaction task did not compact (`undefined` when it did). */
  async function compactionMiss(rt: Runtime, taskId: number): Promise<string | undefined> {
    const record = await rt.getTask(taskId as TaskId);
    if (!record || record.state.status !== "terminal") return "the compaction did not finish";
    const result = compactionResult(record);
    switch (result.status) {
      case "compacted":
        return undefined;
      case "skipped":
        return result.reason;
      case "failed":
        return result.error.message;
      case "aborted":
        return "the compaction was aborted";
    }
  }

  /** Whether the last request passed the model's threshold (needs a declared context window). */
  function overThreshold(agent: ResolvedAgent, tokens: number | undefined): boolean {
    const window = agent.model.contextWindow;
    if (!compaction.auto || window === undefined || tokens === undefined) return false;
    return tokens > window * (agent.model.compactAt ?? compaction.threshold);
  }

  /** A failed call: wait and retry when it may help and attempts are left, else fail the run. */
  async function failedCall(
    rt: Runtime,
    end: Extract<CallEnd, { type: "error" }>,
    attempt: number,
  ): Promise<void> {
    const { error } = end;
    const { round, compacted } = rt.task.checkpoint;
    const next = attempt + 1;
    const retryable = error.retryable === true && next <= retry.maxAttempts;
    const delay = retryable ? retryDelay(retry, next, error.retryAfterMs, random) : undefined;
    if (delay !== undefined) {
      const retryAt = rt.now() + delay;
      const cause = causeOf(error);
      await rt.commit(async (tx) => {
        const live = await tx.doc(LiveDoc, rt.task.conversationId);
        // The failed attempt's partial output is dropped: it is not an answer.
        if (live.generation?.taskId === rt.taskId) live.generation = null;
        live.retry = {
          taskId: rt.taskId,
          attempt: next,
          maxAttempts: retry.maxAttempts,
          retryAt,
          error: cause,
        };
        return {
          phase: "retry",
          round,
          attempt: next,
          retryAt,
          error: cause,
          ...(compacted ? { compacted } : {}),
        };
      });
      return;
    }
    const tooLong =
      retryable && error.retryAfterMs !== undefined
        ? ` (the provider asked to wait ${exactly(error.retryAfterMs)} before trying again, longer than settings.retry.maxDelayMs, ${exactly(retry.maxDelayMs)}, so it was not retried)`
        : "";
    await fail(rt, end, errorInfo(error, attempt, tooLong));
  }

  /** A complete answer: the assistant entry, its usage, and the round's tool tasks, in one commit. */
  async function answer(
    rt: Runtime,
    end: Extract<CallEnd, { type: "done" }>,
    agent: ResolvedAgent,
  ): Promise<void> {
    const conversationId = rt.task.conversationId;
    const calls = end.draft.calls();
    const model = agent.model.name;
    const cost = costOf(end.usage, agent.model.prices);
    const approvals = await turnApprovals(agent, calls, conversationId, rt.now());
    await rt.commit(async (tx, current) => {
      const live = await tx.doc(LiveDoc, conversationId);
      const entry = await tx.appendEntry(
        conversationId,
        assistantEntry(
          rt.taskId,
          {
            role: "assistant",
            content: end.draft.content(),
            stopReason: calls.length > 0 ? "toolUse" : end.stopReason,
          },
          { model, usage: end.usage, cost },
        ),
      );
      await recordUsage(tx, conversationId, model, end.usage, cost);
      live.generation = null;
      if (calls.length === 0) {
        // Inputs steered in while the model answered: it answers them too, in another round.
        if ((await takeSteered(tx, conversationId, rt.taskId, live)) > 0)
          return { phase: "stream", round: current.checkpoint.round + 1 };
        return { status: "terminal", outcome: { kind: "completed", value: { answer: entry.id } } };
      }
      const on = await createToolCalls(tx, toolTask, rt.taskId, agent, calls, approvals, live);
      return {
        status: "waiting",
        checkpoint: { phase: "stream", round: current.checkpoint.round + 1 },
        on,
        policy: "allSettled",
      };
    });
  }

  const definition: TaskDefinition<GenerationInput, GenerationCheckpoint> = defineTask<
    GenerationInput,
    GenerationCheckpoint
  >({
    name: GENERATION_TASK,
    version: 1,
    initial: () => ({ phase: "stream", round: 1 }),
    phases: {
      stream: async (task, rt) => {
        const attempt = task.checkpoint.attempt ?? 1;
        const compacted = task.checkpoint.compacted === true;
        const conversationId = task.conversationId;
        const { overflow } = task.checkpoint as Extract<GenerationCheckpoint, { phase: "stream" }>;
        if (overflow) {
          const why = await compactionMiss(rt, overflow.task);
          if (why !== undefined)
            return fail(rt, undefined, {
              ...overflow.error,
              message: `${overflow.error.message} (the conversation could not be compacted to fit: ${why})`,
            });
        }
        const stored = (await session.snapshot(AgentDoc, conversationId)) ?? {};
        const agent = resolveAgent(stored, task.input.model, defaults);
        if ("error" in agent) return fail(rt, undefined, agent.error);
        // Inputs steered in since the last model call join the context now (after the tool results).
        const inbox = await session.snapshot(InboxDoc, conversationId);
        if ((inbox?.steered?.length ?? 0) > 0)
          await rt.commit(async (tx) => {
            await takeSteered(tx, conversationId, rt.taskId, await tx.doc(LiveDoc, conversationId));
            return undefined;
          });
        const entries = await loadContextEntries(session, conversationId);
        // A tool hook that failed in the last round ends the run with its error.
        const hookFailed = toolHookFailure(entries);
        if (hookFailed) return fail(rt, undefined, hookFailed);
        if (!compacted && overThreshold(agent, lastInputTokens(entries)))
          return compactFirst(rt, "threshold", agent, attempt);
        const built: ModelRequest = {
          ...(agent.system !== undefined ? { system: agent.system } : {}),
          messages: deriveContext(entries),
          tools: agent.tools.map((tool) => tool.spec),
          ...(agent.settings !== undefined ? { settings: agent.settings } : {}),
          conversationId,
        };
        const hooked = await beforeRequest(agent.hooks, built, { conversationId });
        if ("error" in hooked) return fail(rt, undefined, hooked.error);
        const request = hooked.request;
        const progress = generationProgress(session, conversationId, rt.taskId);
        const end = await callModel(agent.model.model, request, attempt, rt.signal, progress);
        rt.signal.throwIfAborted();
        if (end.type === "error") {
          if (end.error.kind === "overflow" && compaction.auto && !compacted)
            return compactFirst(rt, "overflow", agent, attempt, errorInfo(end.error, attempt));
          return failedCall(rt, end, attempt);
        }
        if (agent.hooks.length > 0) {
          const message: AssistantMessage = {
            role: "assistant",
            content: end.draft.content(),
            stopReason: end.draft.calls().length > 0 ? "toolUse" : end.stopReason,
          };
          const after = await afterResponse(agent.hooks, message, { conversationId });
          // The answer is not stored: the run fails with the hook's error instead.
          if (after) return fail(rt, undefined, after.error);
        }
        return answer(rt, end, agent);
      },
      retry: async (task, rt) => {
        const { round, attempt, retryAt, compacted } = task.checkpoint as Extract<
          GenerationCheckpoint,
          { phase: "retry" }
        >;
        await rt.sleep(Math.max(0, retryAt - rt.now()));
        await rt.commit(async (tx) => {
          const live = await tx.doc(LiveDoc, task.conversationId);
          if (live.retry?.taskId === rt.taskId) delete live.retry;
          return { phase: "stream", round, attempt, ...(compacted ? { compacted } : {}) };
        });
      },
    },
    abort: () => "the conversation was aborted",
    // The app may have settled the submission itself (tx.settleSubmission) while the run went on.
    beforeTerminal: async (tx, task) => {
      const id = (task.input as { submissionId?: unknown } | null)?.submissionId;
      const submission =
        typeof id === "number" ? ((await tx.submission(id as SubmissionId)) ?? null) : null;
      return { submission, steered: await steeredRecords(tx, task.conversationId, task.id) };
    },
    onTerminal: (tx, task, read) => {
      const r = read as { submission: SubmissionRecord | null; steered: SubmissionRecord[] } | null;
      return finishRun(tx, task, definition, r?.submission ?? null, r?.steered ?? []);
    },
  });
  return definition;
}
