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
