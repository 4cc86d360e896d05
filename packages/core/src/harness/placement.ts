import type { ConversationId, SubmissionId } from "../domain/ids.js";
import type { ContentPart, Ownership, SubmissionRecord } from "../domain/records.js";
import type { Draft } from "../session/draft.js";
import type { TaskToken } from "../session/tokens.js";
import type { Transaction } from "../session/transaction.js";
import { userEntry } from "./entries.js";
import { InboxDoc } from "./inbox.js";
import { appendWrite } from "./writes.js";
import type { LiveState } from "./live.js";

/** What a generation task is created with: the submission it answers, and the model's name (absent: the conversation's, else "default"). */
export type GenerationInput = { submissionId: number; model?: string };

/** Whether the conversation is answering something or compacting (a new input then queues). */
export function isBusy(live: Readonly<LiveState>): boolean {
  return live.run !== null || live.compaction !== undefined;
}

/**
 * Places a queued input, inside the caller's commit: the user entry, the
 * submission marked `placed`, the generation task that answers it, and
 * `live.run` naming both. All of it is stored together or not at all.
 */
export async function placeInput(
  tx: Transaction,
  generation: TaskToken<GenerationInput>,
  live: Draft<LiveState>,
  conversationId: ConversationId,
  submissionId: SubmissionId,
  content: string | ContentPart[],
  model?: string,
  ownership: Ownership = { kind: "ownerless" },
): Promise<SubmissionRecord> {
  const entry = await tx.appendEntry(conversationId, userEntry(submissionId, content));
  const placed = await tx.placeSubmission(submissionId, entry.id);
  const taskId = await tx.createTask(
    generation,
    { submissionId, ...(model !== undefined ? { model } : {}) },
    { ownership, conversationId },
  );
  live.run = { submissionId, taskId };
  return placed;
}

/**
 * Places the first queued input, if any, appending the writes queued
 * before it on the way (each settles at once); with no input left the
 * conversation is idle (`live.run` null).
 */
export async function placeNext(
  tx: Transaction,
  generation: TaskToken<GenerationInput>,
  live: Draft<LiveState>,
  conversationId: ConversationId,
): Promise<void> {
  const inbox = await tx.doc(InboxDoc, conversationId);
  let next = inbox.queued.shift();
  while (next && "write" in next) {
    await appendWrite(tx, conversationId, next.submissionId as SubmissionId, next.write);
    next = inbox.queued.shift();
  }
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
