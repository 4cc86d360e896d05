import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import type { ErrorInfo, EntryRecord, SubmissionRecord } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import { defineTask, type TaskDefinition } from "../tasks/define-task.js";
import type { TaskRuntime } from "../tasks/runtime.js";
import { deriveContext } from "./context.js";
import { assistantEntry } from "./entries.js";
import { LiveDoc, type LiveToolSlot } from "./live.js";
import type { Model, ModelError, ModelRequest, ModelSettings } from "./model.js";
import { callModel, type CallEnd } from "./model-call.js";
import { DEFAULT_MODEL } from "./models.js";
import type { GenerationInput } from "./placement.js";
import { retryDelay, type RetryPolicy } from "./retry-policy.js";
import { finishRun, UNKNOWN_MODEL } from "./run-settlement.js";
import type { Tool } from "./tool.js";
import type { ToolTaskInput } from "./tool-task.js";

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
 */
export type GenerationCheckpoint =
  | { phase: "stream"; round: number; attempt?: number }
  | { phase: "retry"; round: number; attempt: number; retryAt: number; error: RetryCause };

export interface GenerationDeps {
  readonly session: Session;
  readonly models: ReadonlyMap<string, Model>;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly toolTask: TaskDefinition<
    ToolTaskInput,
    { phase: "start" } | { phase: "running"; attempt: number }
  >;
  /** The assembled instructions, sent as `system` (code: never stored). */
  readonly system?: string;
  /** Sent with every request. */
  readonly settings?: ModelSettings;
  readonly retry: RetryPolicy;
  /** For the retry jitter (tests pin it). */
  readonly random?: () => number;
}

type Runtime = TaskRuntime<GenerationInput, GenerationCheckpoint>;

/** What a failed model call's outcome stores (the submission's `detail`). */
type ModelErrorInfo = ErrorInfo & Omit<ModelError, "message" | "code"> & { attempts?: number };

const PAGE = 256;

/** The model's context for a conversation: stored entries from the newest head marker on. */
export async function loadContext(session: Session, conversationId: ConversationId) {
  const marker = await session.read.latestHead(conversationId);
  const from = marker ? (Math.min(marker.id, marker.head as number) as EntryId) : undefined;
  const entries: EntryRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await session.read.scanEntries(
      { conversationId, order: "ascending", ...(from !== undefined ? { minEntryId: from } : {}) },
      PAGE,
      cursor,
    );
    entries.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return deriveContext(entries);
}

function causeOf(error: ModelError): RetryCause {
  return {
    message: error.message,
    ...(error.code !== undefined ? { code: error.code } : {}),
    ...(error.kind !== undefined ? { kind: error.kind } : {}),
  };
}

/**
 * `durably.generation`: answers one submission. Each round renders the
 * context, calls the model (partials go to `durably.live` as deferred
 * commits), then in ONE commit appends the assistant entry, creates one
 * tool task per call with its live slot and waits on them. A round without
 * calls ends the task; `onTerminal` settles the submission and places the
 * next queued input, in that same commit. A retryable failure commits a
 * `retry` checkpoint and waits; a final one ends the task `failed`.
 */
export function createGenerationTask(
  deps: GenerationDeps,
): TaskDefinition<GenerationInput, GenerationCheckpoint> {
  const { session, models, tools, toolTask, retry } = deps;
  const specs = [...tools.values()].map((tool) => tool.spec);
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

  /** A failed call: wait and retry when it may help and attempts are left, else fail the run. */
  async function failedCall(
    rt: Runtime,
    end: Extract<CallEnd, { type: "error" }>,
    round: number,
    attempt: number,
  ): Promise<void> {
    const { error } = end;
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
        return { phase: "retry", round, attempt: next, retryAt, error: cause };
      });
      return;
    }
    const tooLong =
      retryable && error.retryAfterMs !== undefined
        ? ` (the provider asked to wait ${Math.ceil(error.retryAfterMs / 1000)} s before trying again, longer than settings.retry.maxDelayMs, ${Math.ceil(retry.maxDelayMs / 1000)} s, so it was not retried)`
        : "";
    const { message, code, ...rest } = error;
    await fail(rt, end, {
      name: "ModelError",
      message: `${message}${tooLong}`,
      ...(code !== undefined ? { code } : {}),
      ...rest,
      attempts: attempt,
    });
  }

  /** A complete answer: the assistant entry, and the round's tool tasks, in one commit. */
  async function answer(rt: Runtime, end: Extract<CallEnd, { type: "done" }>): Promise<void> {
    const conversationId = rt.task.conversationId;
    const calls = end.draft.calls();
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
          end.usage,
        ),
      );
      live.generation = null;
      if (calls.length === 0)
        return { status: "terminal", outcome: { kind: "completed", value: { answer: entry.id } } };
      const on: TaskId[] = [];
      for (const call of calls) {
        const toolTaskId = await tx.createTask(
          toolTask,
          { toolCallId: call.id, toolName: call.name, arguments: call.arguments },
          { ownership: { kind: "task", taskId: rt.taskId } },
        );
        const slot: LiveToolSlot = {
          taskId: toolTaskId,
          toolCallId: call.id,
          toolName: call.name,
          status: "pending",
          attempt: 0,
          output: "",
        };
        live.tools[String(toolTaskId)] = slot;
        on.push(toolTaskId);
      }
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
        const { round } = task.checkpoint;
        const attempt = task.checkpoint.attempt ?? 1;
        const name = task.input.model ?? DEFAULT_MODEL;
        const model = models.get(name);
        if (!model)
          return fail(rt, undefined, {
            name: "UnknownModel",
            message: `the run asks for model "${name}", which this harness does not have (it has ${[...models.keys()].map((n) => `"${n}"`).join(", ")})`,
            code: UNKNOWN_MODEL,
          });
        const request: ModelRequest = {
          ...(deps.system !== undefined ? { system: deps.system } : {}),
          messages: await loadContext(session, task.conversationId),
          tools: specs,
          ...(deps.settings !== undefined ? { settings: deps.settings } : {}),
          conversationId: task.conversationId,
        };
        const end = await callModel(session, model, request, rt.taskId, attempt, rt.signal);
        rt.signal.throwIfAborted();
        if (end.type === "error") return failedCall(rt, end, round, attempt);
        return answer(rt, end);
      },
      retry: async (task, rt) => {
        const { round, attempt, retryAt } = task.checkpoint as Extract<
          GenerationCheckpoint,
          { phase: "retry" }
        >;
        await rt.sleep(Math.max(0, retryAt - rt.now()));
        await rt.commit(async (tx) => {
          const live = await tx.doc(LiveDoc, task.conversationId);
          if (live.retry?.taskId === rt.taskId) delete live.retry;
          return { phase: "stream", round, attempt };
        });
      },
    },
    abort: () => "the conversation was aborted",
    // The app may have settled the submission itself (tx.settleSubmission) while the run went on.
    beforeTerminal: async (tx, task) => {
      const id = (task.input as { submissionId?: unknown } | null)?.submissionId;
      return typeof id === "number" ? ((await tx.submission(id as SubmissionId)) ?? null) : null;
    },
    onTerminal: (tx, task, submission) =>
      finishRun(tx, task, definition, submission as SubmissionRecord | null),
  });
  return definition;
}
