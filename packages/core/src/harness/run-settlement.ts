import type { EntryId } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import type { StopReason, SubmissionRecord, TaskOutcome, TaskRecord } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import type { TaskToken } from "../session/tokens.js";
import { UNKNOWN_MODEL, UNKNOWN_TOOL } from "./agent.js";
import { assistantEntry } from "./entries.js";
import { HOOK_FAILED, HOOK_INVALID, UNKNOWN_HOOKS } from "./hooks.js";
import { LiveDoc } from "./live.js";
import { placeNext, type GenerationInput } from "./placement.js";
import { settleSteered } from "./steering.js";

/** The settlement reason of a run that names something the harness does not have, by error code. */
const UNREGISTERED: Readonly<Record<string, string>> = {
  [UNKNOWN_MODEL]: "unknown-model",
  [UNKNOWN_TOOL]: "unknown-tool",
  [UNKNOWN_HOOKS]: "unknown-hooks",
  [HOOK_FAILED]: "hook-failed",
  [HOOK_INVALID]: "hook-failed",
};

/** What a generation's final commit tells `onTerminal` when it answered. */
export type Answered = { answer: number };

type Settlement =
  { status: "done"; answer: EntryId } | { status: "unanswered"; reason: string; detail?: Json };

/**
 * How a generation's outcome settles its submission: `done` with the
 * answer; `unanswered` with reason `model-error` (the model failed: the
 * detail holds the error with its message, code, kind and attempts),
 * `unknown-model`, `unknown-tool` or `unknown-hooks` (the run or its
 * conversation names one the harness does not have: the detail's message
 * names it), `hook-failed` (a hook threw or returned something unusable:
 * the detail is its error, code `HOOK_FAILED` or `HOOK_INVALID`), `aborted`,
 * `faulted` or `orphaned`.
 */
export function settlementOf(task: TaskRecord): Settlement {
  const outcome = (task.state as { outcome: TaskOutcome }).outcome;
  switch (outcome.kind) {
    case "completed":
      return { status: "done", answer: (outcome.value as Answered).answer as EntryId };
    case "failed":
      return {
        status: "unanswered",
        reason: UNREGISTERED[outcome.error.code ?? ""] ?? "model-error",
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
 * is settled already: an app that settled it itself keeps its settlement)
 * and the inputs steered into it the same way (those it never took queue
 * first), and place the next queued input, if any. `submission` is the submission
 * as the commit found it before writing.
 */
export async function finishRun(
  tx: Transaction,
  task: TaskRecord,
  generation: TaskToken<GenerationInput>,
  submission: SubmissionRecord | null,
  steered: readonly SubmissionRecord[] = [],
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
  await settleSteered(tx, conversationId, live, task.id, steered, settlement);
  if (live.run?.taskId !== task.id) return;
  await placeNext(tx, generation, live, conversationId);
}
