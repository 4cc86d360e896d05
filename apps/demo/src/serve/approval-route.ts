import { ApprovalNotPending, type ApprovalDecision, type Conversation } from "@durably/core";
import { HttpError } from "./http-util.js";
import type { ViewerStorage } from "./viewer-storage.js";

/** What the page posts to `/api/conversations/:id/approvals`: one click on Approve or Deny. */
export interface ApprovalRequest {
  toolCallId: string;
  approved: boolean;
  reason?: string;
  /** One per click (the page makes it): a retried POST is the same decision, stored once. */
  requestId: string;
}

const FIELDS = ["toolCallId", "approved", "reason", "requestId"];
const REASON_CHARS = 2000;

/** Checks the body; a 400 names the bad field. */
export function approvalRequest(body: Record<string, unknown>): ApprovalRequest {
  for (const key of Object.keys(body))
    if (!FIELDS.includes(key))
      throw new HttpError(400, `${key} is not a field of a decision (${FIELDS.join(", ")})`);
  const { toolCallId, approved, reason, requestId } = body;
  if (typeof toolCallId !== "string" || toolCallId === "" || toolCallId.length > 200)
    throw new HttpError(400, "toolCallId must be the id of the tool call (a non-empty string)");
  if (typeof approved !== "boolean")
    throw new HttpError(400, `approved must be true or false, got ${JSON.stringify(approved)}`);
  if (reason !== undefined && (typeof reason !== "string" || reason.length > REASON_CHARS))
    throw new HttpError(400, `reason must be a string of at most ${REASON_CHARS} characters`);
  if (typeof requestId !== "string" || !/^[A-Za-z0-9_-]{8,64}$/.test(requestId))
    throw new HttpError(
      400,
      "requestId must be 8 to 64 letters, digits, - or _ (one per click, so a retried POST is decided once)",
    );
  const trimmed = typeof reason === "string" ? reason.trim() : "";
  return {
    toolCallId,
    approved,
    requestId,
    // A denial without a reason still tells the model who denied it.
    ...(trimmed !== "" ? { reason: trimmed } : approved ? {} : { reason: "denied in the viewer" }),
  };
}

/**
 * Stores a person's decision through `conversation.approve`, which starts
 * the scheduler. So it is refused, like running the scripted agent, while
 * another program's run is unfinished in this storage: the scheduler would
 * continue that run with the demo's scripted model. A call that is not
 * waiting (already decided, unknown) is a 409 with the harness's message;
 * nothing is stored then.
 */
export async function decide(
  storage: ViewerStorage,
  conversation: Conversation,
  request: ApprovalRequest,
): Promise<ApprovalDecision> {
  const refused = await storage.allowRun();
  if (refused !== undefined) throw new HttpError(409, `not decided: ${refused}`);
  try {
    return await conversation.approve(request.toolCallId, {
      approved: request.approved,
      ...(request.reason !== undefined ? { reason: request.reason } : {}),
      // Namespaced: the viewer's agent runs use request ids of their own in the same conversation.
      requestId: `viewer-approval-${request.requestId}`,
    });
  } catch (error) {
    if (error instanceof ApprovalNotPending)
      throw new HttpError(409, `not decided: ${error.message}`);
    if (error instanceof TypeError) throw new HttpError(400, `not decided: ${error.message}`);
    throw error;
  }
}
