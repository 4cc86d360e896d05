import { ConversationBusy } from "../domain/errors.js";
import type { ConversationId } from "../domain/ids.js";
import { jsonEqual, type Json } from "../domain/json.js";
import type { ContentPart, SubmissionRecord } from "../domain/records.js";
import type { TaskToken } from "../session/tokens.js";
import type { Transaction } from "../session/transaction.js";
import { checkContent } from "./content.js";
import { InboxDoc, type WriteEntry } from "./inbox.js";
import { LiveDoc } from "./live.js";
import { isBusy, placeInput, type GenerationInput } from "./placement.js";
import { appendWrite, checkWriteEntry } from "./writes.js";
import { checkTextBytes, MAX_KEY_BYTES } from "../domain/json-size.js";

/** An input: a user message the model answers. */
export interface SubmitInputMessage {
  type: "input";
  /** The user's message: text, or text and image parts. */
  content: string | ContentPart[];
  /** The name of the model (of `Harness.open`'s `models`) that answers it; default "default". */
  model?: string;
  /** Makes the submit idempotent: a retry (even after a restart) returns the existing submission. */
  requestId?: string;
  /**
   * When the conversation is answering something: queue a follow-up
   * (default), throw `ConversationBusy`, or steer: put the input into the
   * running answer at its next model call.
   */
  whenBusy?: "followUp" | "reject" | "steer";
}

/** A write: an app entry appended through the inbox, in order with inputs, without a model turn. */
export interface SubmitWrite {
  type: "write";
  entry: WriteEntry;
  requestId?: string;
  /** When the conversation is answering something: queue the write (default) or throw `ConversationBusy`. */
  whenBusy?: "followUp" | "reject";
}

/** What `conversation.submit` takes. */
export type SubmitInput = SubmitInputMessage | SubmitWrite;

/** A checked submit: what the submission stores as its content. */
export type CheckedSubmit =
  | {
      type: "input";
      content: string | ContentPart[];
      model?: string;
      requestId?: string;
      whenBusy?: string;
    }
  | { type: "write"; entry: WriteEntry; requestId?: string; whenBusy?: string };

const INPUT_FIELDS = ["type", "content", "model", "requestId", "whenBusy"];
const WRITE_FIELDS = ["type", "entry", "requestId", "whenBusy"];

/** Checks a submit input; a `TypeError` names the bad field, and nothing is stored. */
export function checkSubmit(input: SubmitInput, models: ReadonlySet<string>): CheckedSubmit {
  if (typeof input !== "object" || input === null)
    throw new TypeError("submit: the input must be an object");
  const i = input as unknown as Record<string, unknown>;
  if (i.type !== "input" && i.type !== "write")
    throw new TypeError(`submit: type must be "input" or "write", got ${JSON.stringify(i.type)}`);
  const fields = i.type === "input" ? INPUT_FIELDS : WRITE_FIELDS;
  for (const key of Object.keys(i))
    if (!fields.includes(key))
      throw new TypeError(`submit: ${key} is not a field of a ${i.type} (${fields.join(", ")})`);
  if (i.requestId !== undefined && (typeof i.requestId !== "string" || i.requestId === ""))
    throw new TypeError("submit: requestId must be a non-empty string");
  // Checked here too (the submission checks it when stored) so the error names the call's field.
  if (i.requestId !== undefined) checkTextBytes(i.requestId, MAX_KEY_BYTES, "submit: requestId");
  const requestId = i.requestId;
  const whenBusy = i.whenBusy as string | undefined;
  const common = {
    ...(requestId !== undefined ? { requestId } : {}),
    ...(whenBusy !== undefined ? { whenBusy } : {}),
  };
  if (i.type === "write") {
    if (whenBusy !== undefined && whenBusy !== "followUp" && whenBusy !== "reject")
      throw new TypeError('submit: a write\'s whenBusy must be "followUp" or "reject"');
    return { type: "write", entry: checkWriteEntry(i.entry), ...common };
  }
  const content = checkContent(i.content, "submit: content");
  if (i.model !== undefined && (typeof i.model !== "string" || !models.has(i.model)))
    throw new TypeError(
      `submit: model ${JSON.stringify(i.model)} is not one of the harness's models (${[...models].map((m) => `"${m}"`).join(", ")})`,
    );
  if (
    whenBusy !== undefined &&
    whenBusy !== "followUp" &&
    whenBusy !== "reject" &&
    whenBusy !== "steer"
  )
    throw new TypeError('submit: whenBusy must be "followUp", "reject" or "steer"');
  return {
    type: "input",
    content,
    ...(i.model !== undefined ? { model: i.model } : {}),
    ...common,
  };
}

/** What a submission stores as its content (a retried `requestId` must match it). */
function contentOf(checked: CheckedSubmit): Json {
  return checked.type === "input" ? checked.content : checked.entry;
}

/**
 * The submit commit: an existing submission for a retried `requestId`; else
 * a new one, placed at once when the conversation is idle (an input: user
 * entry + generation; a write: its entry, settled at once), steered into
 * the running answer (`whenBusy: "steer"` while a run is going on), or
 * queued in `durably.inbox`.
 */
export async function submitIn(
  tx: Transaction,
  generation: TaskToken<GenerationInput>,
  conversationId: ConversationId,
  checked: CheckedSubmit,
): Promise<SubmissionRecord> {
  const { requestId } = checked;
  const content = contentOf(checked);
  if (requestId !== undefined) {
    const existing = await tx.submissionByRequest(conversationId, requestId);
    if (existing) {
      if (
        existing.type !== checked.type ||
        (existing.content !== undefined && !jsonEqual(existing.content, content))
      )
        throw new TypeError(
          `submit: requestId ${JSON.stringify(requestId)} was used by submission ${existing.id} with different content`,
        );
      return existing;
    }
  }
  const live = await tx.doc(LiveDoc, conversationId);
  const busy = isBusy(live);
  if (busy && checked.whenBusy === "reject")
    throw new ConversationBusy(
      `conversation ${conversationId} is ${live.run ? `answering submission ${live.run.submissionId}` : "compacting"}; not queued (whenBusy: "reject")`,
    );
  const created = await tx.createSubmission(conversationId, {
    type: checked.type,
    content,
    ...(requestId !== undefined ? { requestId } : {}),
  });
  const id = created.id;
  if (checked.type === "write") {
    if (!busy) {
      return appendWrite(tx, conversationId, id, checked.entry);
    }
    (await tx.doc(InboxDoc, conversationId)).queued.push({
      submissionId: id,
      write: checked.entry,
    });
    return created;
  }
  const model = checked.model;
  const queued = {
    submissionId: id,
    content: checked.content,
    ...(model !== undefined ? { model } : {}),
  };
  if (!busy) return placeInput(tx, generation, live, conversationId, id, checked.content, model);
  const inbox = await tx.doc(InboxDoc, conversationId);
  // Steering needs a running answer; while a manual compaction holds the conversation it queues.
  if (checked.whenBusy === "steer" && live.run !== null) {
    // Assigned, then pushed through the draft (a `??=` would push into the plain array).
    if (!inbox.steered) inbox.steered = [];
    inbox.steered.push(queued);
  } else inbox.queued.push(queued);
  return created;
}
