import type { ConversationId, SubmissionId, TaskId } from "../domain/ids.js";
import { UnknownRecord } from "../domain/errors.js";
import type { SubmissionRecord } from "../domain/records.js";
import type { CallOptions } from "../storage/port.js";
import { SubmissionUnanswered } from "./errors.js";
import type { HarnessContext } from "./harness-context.js";
import { InboxDoc } from "./inbox.js";
import { LiveDoc } from "./live.js";
import { conversationStream, type StreamOptions } from "./stream.js";
import type { ConversationEvent } from "./stream-events.js";

function settled(record: SubmissionRecord): boolean {
  return record.status === "done" || record.status === "unanswered";
}

/**
 * A handle on one submission. The record itself lives in storage; `status()`
 * reads it, `wait()` resolves once it is settled (starting the harness's
 * scheduler if needed), `abort()` withdraws it.
 */
export class Submission {
  readonly id: SubmissionId;
  readonly conversationId: ConversationId;

  /** @internal Created by `conversation.submit`. */
  constructor(
    private readonly harness: HarnessContext,
    /** The record as the submit commit left it. */
    readonly submitted: SubmissionRecord,
  ) {
    this.id = submitted.id;
    this.conversationId = submitted.conversationId;
  }

  /** The stored record now. */
  async status(options?: CallOptions): Promise<SubmissionRecord> {
    const record = await this.harness.session.read.submission(this.id, options);
    if (!record) throw new UnknownRecord(`submission ${this.id} does not exist`);
    return record;
  }

  /**
   * Resolves with the settled record: `{ status: "done", answer }` or
   * `{ status: "unanswered", reason, detail? }`. Starts the scheduler.
   * Rejects with the session's `SessionFailed` (the storage error as its
   * cause) as soon as the session fails, and `SessionClosed` when the
   * harness closes first.
   */
  async wait(options?: CallOptions): Promise<SubmissionRecord> {
    await this.harness.resume(options);
    return this.harness.settled(this.id, options);
  }

  /**
   * Waits for the answer and resolves with its text (the text parts of the
   * answering assistant message, joined). Rejects `SubmissionUnanswered`
   * (its `record` holds the reason and detail) when the submission settled
   * without an answer.
   */
  async answerText(options?: CallOptions): Promise<string> {
    const record = await this.wait(options);
    if (record.status !== "done" || record.answer === undefined)
      throw new SubmissionUnanswered(
        `submission ${this.id} was not answered: ${record.reason ?? record.status}${detailMessage(record)}`,
        record,
      );
    const stored = await this.harness.session.read.entry(record.answer, options);
    const message = stored?.entry.model?.[0];
    if (message?.role !== "assistant")
      throw new UnknownRecord(
        `submission ${this.id}: answer entry ${record.answer} holds no assistant message`,
      );
    return message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  }

  /**
   * The events of this submission's run as an async iterator (text as it
   * streams, tool calls, output and results), ending with
   * `{ type: "settled", submission }`: `conversation.stream({ until: this })`.
   */
  stream(
    options: Omit<StreamOptions, "until"> = {},
  ): AsyncGenerator<ConversationEvent, void, undefined> {
    return conversationStream(this.harness, this.conversationId, { ...options, until: this.id });
  }

  /**
   * Withdraws the submission: a queued one leaves the inbox and settles
   * `unanswered` ("aborted") at once; a placed one has its generation
   * aborted (its tools too), and settles when that ends. A steered input
   * the running answer already took is placed in that run: the whole run is
   * aborted, and its own submission and every input steered into it settle
   * `unanswered` ("aborted") when it ends. Resolves false when the
   * submission was already settled.
   */
  async abort(options?: CallOptions): Promise<boolean> {
    const { session, scheduler } = this.harness;
    const found = await session.commit(async (tx) => {
      const record = await tx.submission(this.id);
      if (!record) throw new UnknownRecord(`submission ${this.id} does not exist`);
      if (settled(record)) return { aborted: false as const };
      if (record.status === "queued") {
        const inbox = await tx.doc(InboxDoc, record.conversationId);
        const at = inbox.queued.findIndex((q) => q.submissionId === record.id);
        if (at !== -1) inbox.queued.splice(at, 1);
        const steered = inbox.steered?.findIndex((q) => q.submissionId === record.id) ?? -1;
        if (steered !== -1) inbox.steered?.splice(steered, 1);
        await tx.settleSubmission(record.id, { status: "unanswered", reason: "aborted" });
        return { aborted: true as const };
      }
      const live = await tx.doc(LiveDoc, record.conversationId);
      const run = live.run;
      // A steered input the run took is part of that run's answer: aborting it aborts the run,
      // whose end settles it (and the run's own submission) `unanswered`, reason "aborted".
      const carried = run?.submissionId === record.id || run?.steered?.includes(record.id);
      return run && carried
        ? { aborted: true as const, task: run.taskId as TaskId }
        : { aborted: false as const };
    }, options);
    if (!found.aborted) return false;
    if ("task" in found && found.task !== undefined) {
      await scheduler.abortTask(found.task, options);
      await this.harness.resume(options);
    }
    return true;
  }
}

function detailMessage(record: SubmissionRecord): string {
  const message = (record.detail as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? ` (${message})` : "";
}
