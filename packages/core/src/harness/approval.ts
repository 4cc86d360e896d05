import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import type { JsonObject } from "../domain/json.js";
import type { SubmissionRecord, ToolCallPart } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import { ApprovalNotPending } from "./errors.js";
import { LiveDoc, type LiveState } from "./live.js";
import { checkKeys } from "../domain/option-keys.js";
import type { Tool } from "./tool.js";
import { parseArguments } from "./tool-call.js";
import type { ToolCheckpoint } from "./tool-task.js";
import { ownerAbortsIn } from "../tasks/transitions.js";
import { checkTextBytes, MAX_KEY_BYTES } from "../domain/json-size.js";

/** The entry kind that records a person's decision on a tool call (not sent to the model). */
export const APPROVAL_ENTRY = "durably.approval";

/** A tool call waiting for a person's decision (`conversation.approvals()`). */
export interface PendingApproval {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: JsonObject;
  /** The tool task that runs the call once approved. */
  readonly taskId: TaskId;
  /** When the call asked (session clock, ms since the epoch). */
  readonly requestedAt: number;
  /** Set when the tool's `approval` function threw: its error (the call asks, to be safe). */
  readonly note?: string;
}

/** What `conversation.approve` takes. */
export interface ApprovalInput {
  approved: boolean;
  /** Why; a denial's reason is what the model reads ("denied: <reason>"). */
  reason?: string;
  /** Makes the decision idempotent: a retry (even after a restart) returns the stored decision. */
  requestId?: string;
}

/** A stored decision: the submission that carries it and the `durably.approval` entry. */
export interface ApprovalDecision {
  readonly toolCallId: string;
  readonly approved: boolean;
  readonly reason?: string;
  readonly submissionId: SubmissionId;
  readonly entryId: EntryId;
}

/** What a decision's submission holds as its content. */
type DecisionContent = { approval: { toolCallId: string; approved: boolean; reason?: string } };

const FIELDS = ["approved", "reason", "requestId"];

/** Checks `approve`'s arguments; a `TypeError` names the bad one. */
export function checkApproval(toolCallId: unknown, input: unknown): ApprovalInput {
  if (typeof toolCallId !== "string" || toolCallId === "")
    throw new TypeError(
      `approve: toolCallId must be a non-empty string, got ${JSON.stringify(toolCallId)}`,
    );
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new TypeError(
      "approve: the decision must be an object { approved, reason?, requestId? }",
    );
  const i = checkKeys(input, FIELDS, "approve", { what: "a decision field" });
  if (typeof i.approved !== "boolean")
    throw new TypeError(
      `approve: approved must be true or false, got ${JSON.stringify(i.approved)}`,
    );
  if (i.reason !== undefined && typeof i.reason !== "string")
    throw new TypeError("approve: reason must be a string");
  if (i.requestId !== undefined && (typeof i.requestId !== "string" || i.requestId === ""))
    throw new TypeError("approve: requestId must be a non-empty string");
  // Checked here too (the submission checks it when stored) so the error names the call's field.
  if (i.requestId !== undefined) checkTextBytes(i.requestId, MAX_KEY_BYTES, "approve: requestId");
  return {
    approved: i.approved,
    ...(i.reason !== undefined ? { reason: i.reason } : {}),
    ...(i.requestId !== undefined ? { requestId: i.requestId } : {}),
  };
}

/**
 * Whether a call must wait for a person: its tool's `approval` is
 * "always", or a function of the parsed arguments that returns true (or
 * throws: `note` then carries its error). A call whose arguments are
 * invalid does not ask: it cannot run, and fails with the invalid-arguments
 * result instead.
 */
export async function approvalNeeded(
  tool: Tool | undefined,
  call: ToolCallPart,
  conversationId: ConversationId,
): Promise<{ needed: false } | { needed: true; note?: string }> {
  const approval = tool?.approval;
  if (!tool || approval === undefined) return { needed: false };
  if (approval === "always") return { needed: true };
  const parsed = await parseArguments(tool, call);
  if ("problem" in parsed) return { needed: false };
  try {
    const verdict = await approval(parsed.args as JsonObject, {
      conversationId,
      toolCallId: call.id,
      toolName: call.name,
    });
    return verdict === false ? { needed: false } : { needed: true };
  } catch (error) {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { needed: true, note: `approval(${call.name}) threw ${text}` };
  }
}

/** The calls of `live` waiting for a decision, in the order they were made. */
export function pendingApprovals(live: Readonly<LiveState>): PendingApproval[] {
  const out: PendingApproval[] = [];
  for (const slot of Object.values(live.tools))
    if (slot.status === "approval" && slot.approval)
      out.push({
        toolCallId: slot.toolCallId,
        toolName: slot.toolName,
        arguments: slot.approval.arguments,
        taskId: slot.taskId as TaskId,
        requestedAt: slot.approval.requestedAt,
        ...(slot.approval.note !== undefined ? { note: slot.approval.note } : {}),
      });
  return out.sort((a, b) => a.taskId - b.taskId);
}

/** A retried decision: the one its `requestId` stored, when it is the same decision. */
function storedDecision(
  existing: SubmissionRecord,
  toolCallId: string,
  input: ApprovalInput,
): ApprovalDecision {
  const stored = (existing.content as DecisionContent | undefined)?.approval;
  const same =
    existing.type === "write" &&
    stored !== undefined &&
    stored.toolCallId === toolCallId &&
    stored.approved === input.approved &&
    stored.reason === input.reason;
  if (!same || existing.answer === undefined)
    throw new TypeError(
      `approve: requestId ${JSON.stringify(input.requestId)} was used by submission ${existing.id} for ${stored ? `a different decision (${JSON.stringify(stored)})` : "something else"}`,
    );
  return {
    toolCallId,
    approved: stored.approved,
    ...(stored.reason !== undefined ? { reason: stored.reason } : {}),
    submissionId: existing.id,
    entryId: existing.answer,
  };
}

/**
 * Inside one commit: stores a person's decision on a waiting call. The
 * tool task's checkpoint becomes `start` (approved: it is then reserved
 * and runs) or `denied`; the live slot leaves "approval"; a `write`
 * submission carrying the decision is created and settled `done` with a
 * `durably.approval` entry as its answer. A `requestId` seen before
 * returns that decision and writes nothing. A call that is not waiting is
 * `ApprovalNotPending` (and the caller's commit stores nothing).
 */
export async function decideApproval(
  tx: Transaction,
  conversationId: ConversationId,
  toolCallId: string,
  input: ApprovalInput,
): Promise<ApprovalDecision> {
  const { approved, reason, requestId } = input;
  if (requestId !== undefined) {
    const existing = await tx.submissionByRequest(conversationId, requestId);
    // A retry returns the stored decision, whichever call of that id waits now: a requestId
    // names one decision, so one built from the taskId never meets a later call's.
    if (existing) return storedDecision(existing, toolCallId, input);
  }
  const live = await tx.doc(LiveDoc, conversationId);
  // The waiting one first: a provider may reuse a call id of an earlier answer.
  const slots = Object.values(live.tools).filter((s) => s.toolCallId === toolCallId);
  const slot = slots.find((s) => s.status === "approval") ?? slots[0];
  const where = `approve: tool call ${JSON.stringify(toolCallId)} of conversation ${conversationId}`;
  if (!slot)
    throw new ApprovalNotPending(
      `${where} is not waiting for approval: no call of that id is pending (it is unknown, or already has its result)`,
    );
  if (slot.status !== "approval")
    throw new ApprovalNotPending(
      `${where} is not waiting for approval: it is ${slot.status === "running" ? "running" : "approved or denied already, or runs without asking"}`,
    );
  const task = await tx.task(slot.taskId as TaskId);
  const phase = (task?.state as { checkpoint?: ToolCheckpoint } | undefined)?.checkpoint?.phase;
  // An owner's abort reaches the call's task with the scheduler's next commit: until then the call is already being aborted.
  const aborting = task !== undefined && (task.abortRequested || (await ownerAbortsIn(tx, task)));
  if (!task || task.state.status !== "pending" || phase !== "approval" || aborting)
    throw new ApprovalNotPending(
      `${where} is not waiting for approval: its task ${slot.taskId} is ${task ? (aborting ? "being aborted" : `${task.state.status} (${String(phase)})`) : "missing"}`,
    );
  const checkpoint: ToolCheckpoint = approved
    ? { phase: "start", approved: true }
    : { phase: "denied", ...(reason !== undefined ? { reason } : {}) };
  await tx.putTask({ ...task, state: { status: "pending", checkpoint } });
  slot.status = "pending";
  delete slot.approval;
  const decision = { toolCallId, approved, ...(reason !== undefined ? { reason } : {}) };
  const submission = await tx.createSubmission(conversationId, {
    type: "write",
    content: { approval: decision },
    ...(requestId !== undefined ? { requestId } : {}),
  });
  const entry = await tx.appendEntry(conversationId, {
    kind: APPROVAL_ENTRY,
    data: {
      ...decision,
      toolName: slot.toolName,
      taskId: slot.taskId,
      submissionId: submission.id,
    },
  });
  await tx.placeSubmission(submission.id, entry.id);
  await tx.settleSubmission(submission.id, { status: "done", answer: entry.id });
  return { ...decision, submissionId: submission.id, entryId: entry.id };
}
