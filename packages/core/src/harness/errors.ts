import { DurablyError } from "../domain/errors.js";
import type { SubmissionRecord } from "../domain/records.js";

/** A submission settled without an answer (`submission.answerText()`); `record` says why. */
export class SubmissionUnanswered extends DurablyError {
  override readonly name = "SubmissionUnanswered";
  readonly code = "SUBMISSION_UNANSWERED";
  constructor(
    message: string,
    readonly record: SubmissionRecord,
  ) {
    super(message);
  }
}

/**
 * `conversation.approve` named a tool call that is not waiting for a
 * decision: unknown in the conversation, already decided, or running
 * without asking. Nothing was stored.
 */
export class ApprovalNotPending extends DurablyError {
  override readonly name = "ApprovalNotPending";
  readonly code = "APPROVAL_NOT_PENDING";
}
