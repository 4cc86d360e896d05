import type { ConversationId, EntryId } from "../domain/ids.js";
import type { ErrorInfo, TaskRecord } from "../domain/records.js";
import type { Draft } from "../session/draft.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import { defineTask, type TaskDefinition } from "../tasks/define-task.js";
import type { TaskRuntime } from "../tasks/runtime.js";
import { AgentDoc, UNKNOWN_MODEL, type AgentDefaults } from "./agent.js";
import {
  compactionEntry,
  planCompaction,
  summaryRequest,
  type CompactionReason,
} from "./compaction.js";
import { loadContextEntries } from "./context-load.js";
import { LiveDoc, type LiveState } from "./live.js";
import type { ModelSettings } from "./model.js";
import { callModel, type CallEnd, type ModelProgress } from "./model-call.js";
import { ProgressWriter } from "./progress.js";
import { retryDelay, type RetryPolicy } from "./retry-policy.js";
import { costOf, recordUsage } from "./usage.js";

export const COMPACTION_TASK = "durably.compaction";

/** What a compaction task is created with: why, which model summarises, how many turns stay. */
export type CompactionInput = { reason: CompactionReason; model: string; keepLastTurns: number };

/** The failure a summary call ended with, as the checkpoint keeps it for a retry. */
type Cause = { message: string; code?: string; kind?: string };

/**
 * - `select`: choose the cut (or end: nothing to compact);
 * - `summarize`: ask the model for the summary of everything before
 *   `firstKept` (chosen once, so a rerun after a crash summarises the same);
 * - `retry`: call again at `retryAt` after a retryable failure.
 */
export type CompactionCheckpoint =
  | { phase: "select" }
  | { phase: "summarize"; firstKept: number; attempt?: number }
  | { phase: "retry"; firstKept: number; attempt: number; retryAt: number; error: Cause };

/** What a compaction ended with (`conversation.compact` resolves with it). */
export type CompactionResult =
  | { status: "compacted"; entryId: EntryId; firstKept: EntryId }
  | { status: "skipped"; reason: string }
  | { status: "failed"; error: ErrorInfo }
  | { status: "aborted"; reason?: string };

export interface CompactionDeps {
  readonly session: Session;
  readonly defaults: AgentDefaults;
  readonly retry: RetryPolicy;
  readonly random?: () => number;
  /** Places the next queued input (after a manual compaction, which held the conversation). */
  readonly placeNext: (
    tx: Transaction,
    live: Draft<LiveState>,
    conversationId: ConversationId,
  ) => Promise<void>;
}

type Runtime = TaskRuntime<CompactionInput, CompactionCheckpoint>;

const SKIPPED = "nothing to compact: the conversation has no more turns than it keeps";

/** Streams the summary into `live.compaction.text` (deferred commits). */
function summaryProgress(session: Session, conversationId: ConversationId, taskId: number) {
  return new ProgressWriter<ModelProgress>(session, async (tx, items) => {
    const live = await tx.doc(LiveDoc, conversationId);
    const slot = live.compaction;
    if (slot?.taskId !== taskId) return;
    for (const item of items) {
      if (item.type === "begin") {
        slot.text = "";
        if (item.attempt > 1) slot.attempt = item.attempt;
      } else if (item.type === "text") slot.text += item.delta;
    }
  });
}

/** A summary is a clean stop with text and no tool call; anything else would be half a summary. */
function summaryOf(end: Extract<CallEnd, { type: "done" }>): string | { problem: string } {
  if (end.draft.calls().length > 0)
    return { problem: "the model called a tool instead of summarising" };
  if (end.stopReason !== "stop")
    return {
      problem: `the summary ended with stop reason "${end.stopReason}", so it may be incomplete`,
    };
  const text = end.draft
    .content()
    .map((p) => (p.type === "text" ? p.text : ""))
    .join("")
    .trim();
  return text === "" ? { problem: "the model gave an empty summary" } : text;
}

/**
 * `durably.compaction`: replaces the start of a conversation's context by a
 * summary. Its result is ONE commit: the `durably.compaction` head marker
 * (summary + the first kept entry), the usage of the summary call, and the
 * task's end. Killed before that commit, it runs again from its last
 * checkpoint (the cut is kept), so a half-written summary never exists.
 */
export function createCompactionTask(
  deps: CompactionDeps,
): TaskDefinition<CompactionInput, CompactionCheckpoint> {
  const { session, defaults, retry } = deps;
  const random = deps.random ?? Math.random;

  const fail = (rt: Runtime, error: ErrorInfo) =>
    rt.commit(() => ({ status: "terminal", outcome: { kind: "failed", error } }));

  async function settingsFor(conversationId: ConversationId): Promise<ModelSettings | undefined> {
    const agent = (await session.snapshot(AgentDoc, conversationId)) ?? {};
    if (agent.settings === undefined) return defaults.settings;
    return { ...defaults.settings, ...agent.settings };
  }

  return defineTask<CompactionInput, CompactionCheckpoint>({
    name: COMPACTION_TASK,
    version: 1,
    initial: () => ({ phase: "select" }),
    phases: {
      select: async (task, rt) => {
        const entries = await loadContextEntries(session, task.conversationId);
        const plan = planCompaction(entries, { keepLastTurns: task.input.keepLastTurns });
        await rt.commit(() =>
          plan
            ? { phase: "summarize", firstKept: plan.firstKept }
            : { status: "terminal", outcome: { kind: "completed", value: { skipped: SKIPPED } } },
        );
      },
      summarize: async (task, rt) => {
        const { firstKept } = task.checkpoint as Extract<
          CompactionCheckpoint,
          { phase: "summarize" }
        >;
        const attempt = (task.checkpoint as { attempt?: number }).attempt ?? 1;
        const conversationId = task.conversationId;
        const registered = defaults.models.get(task.input.model);
        if (!registered)
          return void (await fail(rt, {
            name: "UnknownModel",
            message: `the compaction asks for model "${task.input.model}", which this harness does not have`,
            code: UNKNOWN_MODEL,
          }));
        const entries = await loadContextEntries(session, conversationId);
        const plan = planCompaction(entries, { firstKept: firstKept as EntryId });
        if (!plan) {
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "completed", value: { skipped: SKIPPED } },
          }));
          return;
        }
        const request = summaryRequest(plan, conversationId, await settingsFor(conversationId));
        const progress = summaryProgress(session, conversationId, rt.taskId);
        const end = await callModel(registered.model, request, attempt, rt.signal, progress);
        rt.signal.throwIfAborted();
        if (end.type === "error") {
          const next = attempt + 1;
          const delay =
            end.error.retryable === true && next <= retry.maxAttempts
              ? retryDelay(retry, next, end.error.retryAfterMs, random)
              : undefined;
          if (delay !== undefined) {
            const { message, code, kind } = end.error;
            const error: Cause = {
              message,
              ...(code !== undefined ? { code } : {}),
              ...(kind !== undefined ? { kind } : {}),
            };
            await rt.commit(async (tx) => {
              const live = await tx.doc(LiveDoc, conversationId);
              if (live.compaction?.taskId === rt.taskId) live.compaction.text = "";
              return { phase: "retry", firstKept, attempt: next, retryAt: rt.now() + delay, error };
            });
            return;
          }
          return void (await fail(rt, {
            name: "ModelError",
            message: `the summary call failed: ${end.error.message}`,
            ...(end.error.code !== undefined ? { code: end.error.code } : {}),
          }));
        }
        const summary = summaryOf(end);
        const cost = costOf(end.usage, registered.prices);
        if (typeof summary !== "string") {
          // The call was made and paid for, even if its answer is no summary: it is counted.
          await rt.commit(async (tx) => {
            await recordUsage(tx, conversationId, registered.name, end.usage, cost);
            return {
              status: "terminal",
              outcome: {
                kind: "failed",
                error: {
                  name: "CompactionFailed",
                  message: summary.problem,
                  code: "COMPACTION_FAILED",
                },
              },
            };
          });
          return;
        }
        await rt.commit(async (tx) => {
          const entry = await tx.appendEntry(
            conversationId,
            compactionEntry(rt.taskId, summary, {
              firstKept: plan.firstKept,
              reason: task.input.reason,
              model: registered.name,
              entries: plan.entries,
              usage: end.usage,
              ...(cost !== undefined ? { cost } : {}),
            }),
          );
          await recordUsage(tx, conversationId, registered.name, end.usage, cost);
          return {
            status: "terminal",
            outcome: { kind: "completed", value: { entryId: entry.id, firstKept: plan.firstKept } },
          };
        });
      },
      retry: async (task, rt) => {
        const { firstKept, attempt, retryAt } = task.checkpoint as Extract<
          CompactionCheckpoint,
          { phase: "retry" }
        >;
        await rt.sleep(Math.max(0, retryAt - rt.now()));
        await rt.commit(() => ({ phase: "summarize", firstKept, attempt }));
      },
    },
    abort: () => "the compaction was aborted",
    onTerminal: async (tx: Transaction, task: TaskRecord) => {
      const live = await tx.doc(LiveDoc, task.conversationId);
      if (live.compaction?.taskId === task.id) delete live.compaction;
      // A manual compaction held the conversation: what queued meanwhile goes next.
      if (task.owner === undefined && live.run === null)
        await deps.placeNext(tx, live, task.conversationId);
    },
  });
}

/** What a terminal compaction task's record says, as `compact()` reports it. */
export function compactionResult(task: TaskRecord): CompactionResult {
  if (task.state.status !== "terminal")
    throw new Error(`internal: compaction task ${task.id} is not terminal`);
  const outcome = task.state.outcome;
  switch (outcome.kind) {
    case "completed": {
      const value = outcome.value as { entryId?: number; firstKept?: number; skipped?: string };
      return value.entryId !== undefined
        ? {
            status: "compacted",
            entryId: value.entryId as EntryId,
            firstKept: value.firstKept as EntryId,
          }
        : { status: "skipped", reason: value.skipped ?? SKIPPED };
    }
    case "failed":
    case "faulted":
      return { status: "failed", error: outcome.error };
    case "aborted":
    case "orphaned":
      return {
        status: "aborted",
        ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
      };
  }
}
