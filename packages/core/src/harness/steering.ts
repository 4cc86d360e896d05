import type { ConversationId, SubmissionId, TaskId } from "../domain/ids.js";
import type { SubmissionRecord } from "../domain/records.js";
import type { Draft } from "../session/draft.js";
import type { Transaction } from "../session/transaction.js";
import { userEntry } from "./entries.js";
import { copyJson } from "../domain/json.js";
import { InboxDoc, type QueuedInput } from "./inbox.js";
import { LiveDoc, type LiveState } from "./live.js";

/**
 * Inside a generation's commit: places the inputs steered into its run
 * (`durably.inbox` `steered`), each a user entry after whatever is stored
 * (so after the round's tool results), marks them placed and lists them in
 * `live.run.steered`, where they wait to settle with the run. Returns how
 * many it placed (0 when the run is not the conversation's running one).
 */
export async function takeSteered(
  tx: Transaction,
  conversationId: ConversationId,
  taskId: TaskId,
  live: Draft<LiveState>,
): Promise<number> {
  const run = live.run;
  if (run?.taskId !== taskId) return 0;
  const inbox = await tx.doc(InboxDoc, conversationId);
  if (!inbox.steered || inbox.steered.length === 0) return 0;
  // Plain copies: the draft's own array goes away with the field.
  const steered = copyJson(inbox.steered, "inbox.steered") as QueuedInput[];
  delete inbox.steered;
  for (const input of steered) {
    const id = input.submissionId as SubmissionId;
    const entry = await tx.appendEntry(conversationId, userEntry(id, input.content));
    await tx.placeSubmission(id, entry.id);
    if (!run.steered) run.steered = [];
    run.steered.push(id);
  }
  return steered.length;
}

/**
 * The records of the inputs steered into a run, read before the commit
 * that ends it writes anything (a transaction reads tables first).
 */
export async function steeredRecords(
  tx: Transaction,
  conversationId: ConversationId,
  taskId: TaskId,
): Promise<SubmissionRecord[]> {
  const live = await tx.doc(LiveDoc, conversationId);
  if (live.run?.taskId !== taskId) return [];
  const out: SubmissionRecord[] = [];
  for (const id of live.run.steered ?? []) {
    const record = await tx.submission(id as SubmissionId);
    if (record) out.push(record);
  }
  return out;
}

/**
 * Inside the commit that ends a run: the inputs steered into it settle as
 * its submission did (the same answer, or the same reason); those it never
 * took (it ended first) go to the front of the queue, in order, to be
 * answered next.
 */
export async function settleSteered(
  tx: Transaction,
  conversationId: ConversationId,
  live: Draft<LiveState>,
  taskId: TaskId,
  steered: readonly SubmissionRecord[],
  settlement: Parameters<Transaction["settleSubmission"]>[1],
): Promise<void> {
  const run = live.run;
  for (const record of steered)
    if (record.status === "placed") await tx.settleSubmission(record.id, settlement);
  const inbox = await tx.doc(InboxDoc, conversationId);
  if (run?.taskId === taskId && inbox.steered && inbox.steered.length > 0) {
    const untaken = copyJson(inbox.steered, "inbox.steered") as QueuedInput[];
    delete inbox.steered;
    inbox.queued.unshift(...untaken);
  }
}
