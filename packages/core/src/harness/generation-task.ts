import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import type { Json, JsonObject } from "../domain/json.js";
import type {
  AssistantMessage,
  EntryRecord,
  StopReason,
  SubmissionRecord,
  TaskOutcome,
  TaskRecord,
} from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import { defineTask, type TaskDefinition } from "../tasks/define-task.js";
import { deriveContext } from "./context.js";
import { AssistantDraft } from "./assistant-draft.js";
import { assistantEntry } from "./entries.js";
import { InboxDoc } from "./inbox.js";
import { LiveDoc, type LiveToolSlot } from "./live.js";
import type { Model, ModelEvent } from "./model.js";
import { placeInput, type GenerationInput } from "./placement.js";
import { ProgressWriter } from "./progress.js";
import type { Tool } from "./tool.js";
import type { ToolTaskInput } from "./tool-task.js";

export const GENERATION_TASK = "durably.generation";

/** One model call per round; a round with tool calls waits for their tasks, then the next round runs. */
export type GenerationCheckpoint = { phase: "stream"; round: number };

export interface GenerationDeps {
  readonly session: Session;
  readonly model: Model;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly toolTask: TaskDefinition<
    ToolTaskInput,
    { phase: "start" } | { phase: "running"; attempt: number }
  >;
}

/** What the generation's final commit tells `onTerminal`. */
type Answered = { answer: number };

type Progress =
  | { type: "begin" }
  | { type: "text"; delta: string }
  | { type: "toolCall"; call: { id: string; name: string; arguments: JsonObject } };

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

/**
 * `durably.generation`: answers one submission. Each round renders the
 * context, streams the model (partials go to `durably.live` as deferred
 * commits), then in ONE commit appends the assistant entry, creates one
 * tool task per call with its live slot and waits on them. A round without
 * calls ends the task; `onTerminal` settles the submission and places the
 * next queued input, in that same commit.
 */
export function createGenerationTask(
  deps: GenerationDeps,
): TaskDefinition<GenerationInput, GenerationCheckpoint> {
  const { session, model, tools, toolTask } = deps;
  const specs = [...tools.values()].map((tool) => tool.spec);

  const definition: TaskDefinition<GenerationInput, GenerationCheckpoint> = defineTask<
    GenerationInput,
    GenerationCheckpoint
  >({
    name: GENERATION_TASK,
    version: 1,
    initial: () => ({ phase: "stream", round: 1 }),
    phases: {
      stream: async (task, rt) => {
        const conversationId = task.conversationId;
        const taskId = task.id;
        const messages = await loadContext(session, conversationId);
        const progress = new ProgressWriter<Progress>(session, async (tx, items) => {
          const live = await tx.doc(LiveDoc, conversationId);
          let text = "";
          const flushText = (): void => {
            if (text !== "" && live.generation?.taskId === taskId) live.generation.text += text;
            text = "";
          };
          for (const item of items) {
            if (item.type === "text") {
              text += item.delta;
              continue;
            }
            flushText();
            if (item.type === "begin") live.generation = { taskId, text: "", toolCalls: [] };
            else if (live.generation?.taskId === taskId) live.generation.toolCalls.push(item.call);
          }
          flushText();
        });
        void progress.push({ type: "begin" }).catch(() => undefined);

        const draft = new AssistantDraft();
        let end: Extract<ModelEvent, { type: "done" | "error" }> | undefined;
        try {
          for await (const event of model.stream(
            { messages, tools: specs, conversationId },
            { signal: rt.signal },
          )) {
            if (event.type === "text") {
              if (event.delta === "") continue;
              draft.text(event.delta);
              void progress.push({ type: "text", delta: event.delta }).catch(() => undefined);
            } else if (event.type === "reasoning") {
              draft.reasoning(event);
            } else if (event.type === "toolCall") {
              const call = draft.toolCall(event);
              void progress
                .push({
                  type: "toolCall",
                  call: { id: call.id, name: call.name, arguments: call.arguments },
                })
                .catch(() => undefined);
            } else {
              end = event;
              break;
            }
          }
        } finally {
          await progress.settle().catch(() => undefined); // ordered before whatever commits next
        }
        end ??= { type: "error", message: "the model stream ended without a done or error event" };
        rt.signal.throwIfAborted();

        const calls = draft.calls();
        if (end.type === "error") {
          const content = draft.withoutCalls();
          await rt.commit(async (tx) => {
            // Text only: calls of a failed turn never reach the transcript without their tasks.
            if (content.length > 0)
              await tx.appendEntry(
                conversationId,
                assistantEntry(taskId, { role: "assistant", content, stopReason: "error" }),
              );
            return {
              status: "terminal",
              outcome: {
                kind: "failed",
                error: {
                  name: "ModelError",
                  message: end.message,
                  ...(end.code !== undefined ? { code: end.code } : {}),
                },
              },
            };
          });
          return;
        }
        await rt.commit(async (tx, current) => {
          const live = await tx.doc(LiveDoc, conversationId);
          const message: AssistantMessage = {
            role: "assistant",
            content: draft.content(),
            stopReason: calls.length > 0 ? "toolUse" : end.stopReason,
          };
          const entry = await tx.appendEntry(
            conversationId,
            assistantEntry(taskId, message, end.usage),
          );
          live.generation = null;
          if (calls.length === 0)
            return {
              status: "terminal",
              outcome: { kind: "completed", value: { answer: entry.id } },
            };
          const on: TaskId[] = [];
          for (const call of calls) {
            const toolTaskId = await tx.createTask(
              toolTask,
              { toolCallId: call.id, toolName: call.name, arguments: call.arguments },
              { ownership: { kind: "task", taskId } },
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

function settlementOf(
  task: TaskRecord,
): { status: "done"; answer: EntryId } | { status: "unanswered"; reason: string; detail?: Json } {
  const outcome = (task.state as { outcome: TaskOutcome }).outcome;
  switch (outcome.kind) {
    case "completed":
      return { status: "done", answer: (outcome.value as Answered).answer as EntryId };
    case "failed":
      return { status: "unanswered", reason: "model-error", detail: { ...outcome.error } };
    case "aborted":
      return {
        status: "unanswered",
        reason: "aborted",
        ...(outcome.reason !== undefined ? { detail: { reason: outcome.reason } } : {}),
      };
    case "faulted":
      return { status: "unanswered", reason: "faulted", detail: { ...outcome.error } };
    case "orphaned":
      return {
        status: "unanswered",
        reason: "orphaned",
        ...(outcome.reason !== undefined ? { detail: { reason: outcome.reason } } : {}),
      };
  }
}

/**
 * Inside the commit that ends a generation: keep the partial text of an
 * aborted or faulted turn (text only, never calls), clear the live slot,
 * settle the submission (unless it is settled already: an app that settled
 * it itself keeps its settlement), and place the next queued input, if any.
 * `submission` is the submission as the commit found it before writing.
 */
async function finishRun(
  tx: Transaction,
  task: TaskRecord,
  generation: TaskDefinition<GenerationInput, GenerationCheckpoint>,
  submission: SubmissionRecord | null,
): Promise<void> {
  const conversationId = task.conversationId;
  const live = await tx.doc(LiveDoc, conversationId);
  const settlement = settlementOf(task);
  const partial = live.generation?.taskId === task.id ? live.generation.text : "";
  if (partial !== "" && settlement.status === "unanswered" && settlement.reason !== "model-error") {
    const stopReason: StopReason = settlement.reason === "aborted" ? "aborted" : "error";
    await tx.appendEntry(
      conversationId,
      assistantEntry(task.id, {
        role: "assistant",
        content: [{ type: "text", text: partial }],
        stopReason,
      }),
    );
  }
  if (live.generation?.taskId === task.id) live.generation = null;
  if (submission?.status === "queued" || submission?.status === "placed")
    await tx.settleSubmission(submission.id, settlement);
  if (live.run?.taskId !== task.id) return;
  const inbox = await tx.doc(InboxDoc, conversationId);
  const next = inbox.queued.shift();
  if (!next) {
    live.run = null;
    return;
  }
  await placeInput(
    tx,
    generation,
    live,
    conversationId,
    next.submissionId as SubmissionId,
    next.content,
  );
}
