import type { EntryId, SubmissionId } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import type { StopReason, SubmissionRecord, TaskOutcome, TaskRecord } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import type { TaskToken } from "../session/tokens.js";
import { assistantEntry } from "./entries.js";
import { InboxDoc } from "./inbox.js";
import { LiveDoc } from "./live.js";
import { placeInput, type GenerationInput } from "./placement.js";

/** The `code` of the failure a generation ends with when its model is not registered. */
export const UNKNOWN_MODEL = "UNKNOWN_MODEL";

/** What a generation's final commit tells `onTerminal` when it answered. */
export type Answered = { answer: number };

type Settlement =
  { status: "done"; answer: EntryId } | { status: "unanswered"; reason: string; detail?: Json };

/**
 * How a generation's outcome settles its submission: `done` with the
 * answer; `unanswered` with reason `model-error` (the model failed: the
 * detail holds the error with its message, code, kind and attempts),
 * `unknown-model`, `aborted`, `faulted` or `orphaned`.
 */
export function settlementOf(task: TaskRecord): Settlement {
  const outcome = (task.state as { outcome: TaskOutcome }).outcome;
  switch (outcome.kind) {
    case "completed":
      return { status: "done", answer: (outcome.value as Answered).answer as EntryId };
    case "failed":
      return {
        status: "unanswered",
        reason: outcome.error.code === UNKNOWN_MODEL ? "unknown-model" : "model-error",
        detail: { ...outcome.error },
      };
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
 * aborted or faulted turn (text only, never calls), clear its live slots
 * (the streaming answer, a pending retry), settle the submission (unless it
 * is settled already: an app that settled it itself keeps its settlement),
 * and place the next queued input, if any. `submission` is the submission
 * as the commit found it before writing.
 */
export async function finishRun(
  tx: Transaction,
  task: TaskRecord,
  generation: TaskToken<GenerationInput>,
  submission: SubmissionRecord | null,
): Promise<void> {
  const conversationId = task.conversationId;
  const live = await tx.doc(LiveDoc, conversationId);
  const settlement = settlementOf(task);
  const partial = live.generation?.taskId === task.id ? live.generation.text : "";
  if (
    partial !== "" &&
    settlement.status === "unanswered" &&
    (settlement.reason === "aborted" ||
      settlement.reason === "faulted" ||
      settlement.reason === "orphaned")
  ) {
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
  if (live.retry?.taskId === task.id) delete live.retry;
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
    next.model,
  );
}
