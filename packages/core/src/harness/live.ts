import type { JsonObject } from "../domain/json.js";
import { defineDoc } from "../session/tokens.js";
import type { OutputCut } from "./tool-output.js";

/** The running generation's partial answer (deferred progress: shown at once, stored within the progress window). */
export type LiveGeneration = {
  taskId: number;
  text: string;
  toolCalls: { id: string; name: string; arguments: JsonObject }[];
  /** The model's reasoning so far, when it shows any. */
  reasoning?: string;
  /** Which model call of this round it is: 1, then 2, 3... after retries (absent: 1). */
  attempt?: number;
};

/**
 * A generation waiting to call the model again after a retryable failure:
 * `attempt` (of `maxAttempts`) starts at `retryAt` (session clock, ms since
 * the epoch); `error` is the failure that caused the wait.
 */
export type LiveRetry = {
  taskId: number;
  attempt: number;
  maxAttempts: number;
  retryAt: number;
  error: { message: string; code?: string; kind?: string };
};

/**
 * A call waiting for a person's decision (`conversation.approve`): its
 * arguments, when it asked (session clock), and, when the tool's
 * `approval` function threw, its error (the call then asks, to be safe).
 */
export type LiveApproval = { arguments: JsonObject; requestedAt: number; note?: string };

/** A tool call's slot, created with the assistant entry, removed with its result. */
export type LiveToolSlot = {
  taskId: number;
  toolCallId: string;
  toolName: string;
  /** "approval": the call waits for `conversation.approve` (holding no concurrency slot). */
  status: "pending" | "approval" | "running";
  /** Present while `status` is "approval". */
  approval?: LiveApproval;
  /** 0 until the first intent commit; a safe tool rerun after a crash counts up. */
  attempt: number;
  /** Output streamed so far through `api.output` (deferred progress): the newest part, within `settings.toolOutput`. */
  output: string;
  /** What was cut from the front of `output` to keep it bounded; absent while nothing was. */
  outputCut?: OutputCut;
};

/**
 * A compaction running in the conversation: `reason` is "manual"
 * (`conversation.compact`), "threshold" (the last request passed the
 * model's `contextWindow × threshold`) or "overflow" (the model refused the
 * request as too long); `text` is the summary streamed so far (deferred
 * progress: shown, not yet an entry).
 */
export type LiveCompaction = {
  taskId: number;
  reason: "manual" | "threshold" | "overflow";
  text: string;
  /** Which call: 1, then 2, 3... after retries (absent: 1). */
  attempt?: number;
};

/** The submission being answered and the generation task answering it. */
export type LiveRun = {
  submissionId: number;
  taskId: number;
  /** Inputs steered into this answer (placed in its transcript; they settle with it). */
  steered?: number[];
};

export type LiveState = {
  /** `null`: the conversation is idle. Changed by ordinary commits only. */
  run: LiveRun | null;
  generation: LiveGeneration | null;
  /** Present while a generation waits to retry its model call (changed by ordinary commits). */
  retry?: LiveRetry;
  /** By tool task id. */
  tools: { [taskId: string]: LiveToolSlot };
  /** Present while a compaction runs; a manual one makes the conversation busy (inputs queue). */
  compaction?: LiveCompaction;
};

/**
 * `durably.live`: what is running in a conversation right now. Structure
 * (`run`, tool slots) changes in ordinary commits, atomically with the
 * tasks they describe; streamed text and tool output change in deferred
 * commits. A fork starts idle.
 */
export const LiveDoc = defineDoc<LiveState, "conversation">({
  kind: "durably.live",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ run: null, generation: null, tools: {} }),
  // Streaming appends many small deltas; a base every so often keeps reads short.
  checkpointWhen: (_value, _ops, { deltasSinceBase }) => deltasSinceBase >= 64,
});

/** Whether a tool slot shows output (the newest part, or a cut of earlier parts). */
export const holdsOutput = (slot: LiveToolSlot): boolean =>
  slot.output !== "" || slot.outputCut !== undefined;

/** Makes `attempt` the slot's attempt, with no output yet. */
export function startAttempt(slot: LiveToolSlot, attempt: number): void {
  if (slot.attempt !== attempt) slot.attempt = attempt;
  if (slot.output !== "") slot.output = "";
  if (slot.outputCut) delete slot.outputCut;
}
