import type { ConversationId, SubmissionId } from "../domain/ids.js";
import type { ContentPart, SubmissionRecord } from "../domain/records.js";
import type { Draft } from "../session/draft.js";
import type { TaskToken } from "../session/tokens.js";
import type { Transaction } from "../session/transaction.js";
import { userEntry } from "./entries.js";
import type { LiveState } from "./live.js";

/** What a generation task is created with: the submission it answers, and the model's name (absent: "default"). */
export type GenerationInput = { submissionId: number; model?: string };

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
): Promise<SubmissionRecord> {
  const entry = await tx.appendEntry(conversationId, userEntry(submissionId, content));
  const placed = await tx.placeSubmission(submissionId, entry.id);
  const taskId = await tx.createTask(
    generation,
    { submissionId, ...(model !== undefined ? { model } : {}) },
    { ownership: { kind: "ownerless" }, conversationId },
  );
  live.run = { submissionId, taskId };
  return placed;
}
