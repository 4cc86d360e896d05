import { ConversationBusy, UnknownRecord } from "../domain/errors.js";
import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import { copyJson } from "../domain/json.js";
import type { EntryRecord, SubmissionRecord, SubmissionStatus } from "../domain/records.js";
import type { CallOptions, Cursor } from "../storage/port.js";
import {
  AgentDoc,
  applyAgentChange,
  checkAgentConfig,
  type AgentConfig,
  type AgentState,
} from "./agent.js";
import {
  checkApproval,
  decideApproval,
  pendingApprovals,
  type ApprovalDecision,
  type ApprovalInput,
  type PendingApproval,
} from "./approval.js";
import { checkKeepLastTurns } from "./compaction-policy.js";
import { compactionResult, type CompactionResult } from "./compaction-task.js";
import type { HarnessContext } from "./harness-context.js";
import { InboxDoc } from "./inbox.js";
import { LiveDoc } from "./live.js";
import { DEFAULT_MODEL } from "./models.js";
import { isBusy } from "./placement.js";
import { conversationStream, type StreamOptions } from "./stream.js";
import type { ConversationEvent } from "./stream-events.js";
import { Submission } from "./submission.js";
import { checkSubmit, submitIn, type SubmitInput } from "./submit.js";
import { checkKeys } from "../domain/option-keys.js";
import { UsageDoc, usageReport } from "./usage.js";
import {
  ConversationWatch,
  type ConversationView,
  type ViewListener,
  type WatchOptions,
} from "./watch.js";

const PAGE = 256;

/** A handle on one conversation of a harness. */
export class Conversation {
  /** @internal Created by the harness. */
  constructor(
    private readonly harness: HarnessContext,
    readonly id: ConversationId,
  ) {}

  /**
   * Submits an input or a write. Idle: an input is placed at once (user
   * entry + generation, one commit); a write's entry is appended and its
   * submission settled `done` at once. Busy: queued in `durably.inbox`,
   * placed (or appended) in order when the running answer settles; with
   * `whenBusy: "reject"` it throws `ConversationBusy` and stores nothing;
   * an input with `whenBusy: "steer"` goes into the running answer at its
   * next model call (after the current tool results) and settles with it.
   * With a `requestId`, a retried submit returns the existing submission
   * (its type and content must match; `model` and `whenBusy` are not
   * compared). Starts the scheduler.
   */
  async submit(input: SubmitInput, options?: CallOptions): Promise<Submission> {
    const checked = checkSubmit(input, this.harness.modelNames);
    const { session, generation } = this.harness;
    const record = await session.commit(
      (tx) => submitIn(tx, generation, this.id, checked),
      options,
    );
    await this.harness.resume(options);
    return new Submission(this.harness, record);
  }

  /** A handle on an existing submission of this conversation. */
  async submission(id: SubmissionId, options?: CallOptions): Promise<Submission> {
    const record = await this.harness.session.read.submission(id, options);
    if (!record || record.conversationId !== this.id)
      throw new UnknownRecord(`submission ${id} does not exist in conversation ${this.id}`);
    return new Submission(this.harness, record);
  }

  /**
   * The conversation's submissions, oldest first: all of them, or those
   * with the given status (or statuses): `["queued", "placed"]` finds the
   * work still pending after a restart.
   */
  async submissions(
    options: CallOptions & { status?: SubmissionStatus | readonly SubmissionStatus[] } = {},
  ): Promise<Submission[]> {
    const { status, ...call } = checkKeys(options, ["status", "signal"], "submissions") as {
      status?: SubmissionStatus | readonly SubmissionStatus[];
      signal?: AbortSignal;
    };
    const statuses: (SubmissionStatus | undefined)[] =
      status === undefined ? [undefined] : typeof status === "string" ? [status] : [...status];
    for (const s of statuses)
      if (s !== undefined && !["queued", "placed", "done", "unanswered"].includes(s))
        throw new TypeError(
          `submissions: status ${JSON.stringify(s)} is not one of queued, placed, done, unanswered`,
        );
    const records: SubmissionRecord[] = [];
    for (const s of new Set(statuses)) {
      let cursor: Cursor | undefined;
      do {
        const page = await this.harness.session.read.scanSubmissions(
          {
            conversationId: this.id,
            order: "ascending",
            ...(s !== undefined ? { status: s } : {}),
          },
          PAGE,
          cursor,
          call,
        );
        records.push(...page.items);
        cursor = page.next;
      } while (cursor !== undefined);
    }
    return records.sort((a, b) => a.id - b.id).map((r) => new Submission(this.harness, r));
  }

  /**
   * Configures the conversation's agent, stored in `durably.agent` (one
   * commit; a fork starts with it): `model` names one of the harness's
   * models, `tools` the tools offered (in order; absent: all of them),
   * `instructions` lay over the harness's (a string replaces them, sections
   * replace the harness's section of the same id), `settings` over its
   * `settings.model`. A field set to `null` goes back to the harness's, an
   * absent field stays. Names are checked first: an unknown one is a
   * `TypeError` and nothing is stored. Applies from the next model call on.
   * Resolves with the stored configuration.
   */
  async configure(config: AgentConfig, options?: CallOptions): Promise<AgentState> {
    const change = checkAgentConfig(config, {
      models: this.harness.modelNames,
      tools: this.harness.toolNames,
      hooks: this.harness.hookNames,
    });
    return this.harness.session.commit(async (tx) => {
      const agent = await tx.doc(AgentDoc, this.id);
      applyAgentChange(agent, change);
      return copyJson(agent, "durably.agent") as AgentState;
    }, options);
  }

  /** The stored agent configuration (`{}` when never configured: everything follows the harness). */
  async configuration(): Promise<AgentState> {
    return (await this.harness.session.snapshot(AgentDoc, this.id)) ?? {};
  }

  /** This conversation's usage: model calls, tokens and cost, in total and per model. */
  async usage(): Promise<ReturnType<typeof usageReport>> {
    return usageReport(await this.harness.session.snapshot(UsageDoc, null), this.id);
  }

  /**
   * Compacts the conversation now: a `durably.compaction` task asks the
   * conversation's model for a summary of everything before the last
   * `keepLastTurns` turns (default `settings.compaction.keepLastTurns`),
   * then one commit appends the compaction entry (a head marker: the model
   * sees the summary, then the kept turns, then what follows). The full
   * transcript stays. The conversation is busy meanwhile (inputs queue);
   * a busy conversation throws `ConversationBusy`. Resolves with the
   * outcome: `compacted` (the entry), `skipped` (nothing to compact),
   * `failed` (the summary call failed) or `aborted`. The task is durable:
   * a process that dies meanwhile finishes it after reopening (a harness
   * closed meanwhile rejects the wait with `SessionClosed`).
   */
  async compact(options: CallOptions & { keepLastTurns?: number } = {}): Promise<CompactionResult> {
    checkKeys(options, ["keepLastTurns", "signal"], "compact");
    const keepLastTurns = checkKeepLastTurns(
      options.keepLastTurns ?? this.harness.compactionPolicy.keepLastTurns,
      "compact: keepLastTurns",
    );
    const { session, scheduler, compaction } = this.harness;
    const model = (await this.configuration()).model ?? DEFAULT_MODEL;
    const taskId = await session.commit(async (tx) => {
      const live = await tx.doc(LiveDoc, this.id);
      if (isBusy(live))
        throw new ConversationBusy(
          `compact: conversation ${this.id} is ${live.run ? `answering submission ${live.run.submissionId}` : "compacting already"}; compact when it is idle (automatic compaction covers running answers)`,
        );
      const id = await tx.createTask(
        compaction,
        { reason: "manual", model, keepLastTurns },
        { ownership: { kind: "ownerless" }, conversationId: this.id },
      );
      live.compaction = { taskId: id, reason: "manual", text: "" };
      return id;
    }, options);
    await this.harness.resume(options);
    // A harness closing meanwhile ends the wait (the task resumes at the next open).
    const closing = this.harness.closing;
    const signal = options.signal ? AbortSignal.any([options.signal, closing]) : closing;
    return compactionResult(await scheduler.waitForTask(taskId, { signal }));
  }

  /**
   * The conversation's events as an async iterator: `text` and `reasoning`
   * deltas as the model streams them, `toolCall` and `toolResult` once
   * stored, `toolOutput` as tools stream it, `retry` waits, `compaction`s.
   * With `until` (a submission or its id) it follows that submission's run
   * only, from its start, and ends with `{ type: "settled", submission }`;
   * without, it yields what happens from now on until the loop breaks or
   * `signal` aborts. Built on `watch`: text is shown before it is stored.
   */
  stream(options?: StreamOptions): AsyncGenerator<ConversationEvent, void, undefined> {
    return conversationStream(this.harness, this.id, options);
  }

  /**
   * Aborts the running answer (its generation and tools; the submission
   * settles `unanswered`, reason "aborted") or the running manual
   * compaction, and withdraws every queued follow-up the same way. A tool
   * call waiting for approval ends denied ("denied: the conversation was
   * aborted before anyone decided"). Resolves with how many submissions it
   * aborted (the inputs steered into the running answer included).
   */
  async abort(options?: CallOptions): Promise<number> {
    const { session, scheduler } = this.harness;
    const { queued, steered, task, compaction } = await session.commit(async (tx) => {
      const inbox = await tx.doc(InboxDoc, this.id);
      const live = await tx.doc(LiveDoc, this.id);
      const waiting = [...inbox.queued, ...(inbox.steered ?? [])].map(
        (q) => q.submissionId as SubmissionId,
      );
      // Inputs the run already took settle aborted with it (those still unsettled count).
      let taken = 0;
      for (const id of live.run?.steered ?? [])
        if ((await tx.submission(id as SubmissionId))?.status === "placed") taken += 1;
      if (inbox.queued.length > 0) inbox.queued.splice(0, inbox.queued.length);
      if (inbox.steered) delete inbox.steered;
      for (const id of waiting)
        await tx.settleSubmission(id, { status: "unanswered", reason: "aborted" });
      const compacting = live.run === null ? live.compaction?.taskId : undefined;
      return {
        queued: waiting.length,
        steered: taken,
        task: live.run?.taskId as TaskId | undefined,
        compaction: compacting as TaskId | undefined,
      };
    }, options);
    let running = 0;
    if (task !== undefined && (await scheduler.abortTask(task, options))) running = 1 + steered;
    if (compaction !== undefined) await scheduler.abortTask(compaction, options);
    if (task !== undefined || compaction !== undefined) await this.harness.resume(options);
    return queued + running;
  }

  /** The tool calls waiting for a person's decision, oldest first (from `durably.live`). */
  async approvals(): Promise<PendingApproval[]> {
    const live = await this.harness.session.snapshot(LiveDoc, this.id);
    return live ? pendingApprovals(live) : [];
  }

  /**
   * Decides a tool call waiting for approval, in one commit: approved, it
   * runs (once); denied, the model gets the error result "denied: <reason>"
   * and the run goes on. Stored as a submission (type "write", settled at
   * once, its answer a `durably.approval` entry), so a `requestId` makes a
   * retry, even after a restart, return the stored decision. A call that
   * is not waiting (unknown, already decided) rejects `ApprovalNotPending`
   * and stores nothing. Starts the scheduler.
   */
  async approve(
    toolCallId: string,
    decision: ApprovalInput,
    options?: CallOptions,
  ): Promise<ApprovalDecision> {
    const input = checkApproval(toolCallId, decision);
    const stored = await this.harness.session.commit(
      (tx) => decideApproval(tx, this.id, toolCallId, input),
      options,
    );
    await this.harness.resume(options);
    return stored;
  }

  /**
   * A new conversation that sees this one's entries up to and including
   * `at` (default: the newest visible entry). It starts idle, with an empty
   * inbox.
   */
  async fork(options: CallOptions & { at?: EntryId } = {}): Promise<Conversation> {
    checkKeys(options, ["at", "signal"], "fork");
    const { session } = this.harness;
    const child = await session.commit(async (tx) => {
      let at = options.at;
      if (at === undefined) {
        const newest = await tx.scanEntries({ conversationId: this.id, order: "descending" }, 1);
        at = newest.items[0]?.id;
        if (at === undefined)
          throw new TypeError(`fork: conversation ${this.id} has no entries to fork at`);
      }
      return tx.forkConversation(this.id, at, { ownership: { kind: "ownerless" } });
    }, options);
    return new Conversation(this.harness, child.id);
  }

  /** The visible transcript, ascending (a fork's includes its parent's up to the fork point). */
  async entries(options?: CallOptions): Promise<EntryRecord[]> {
    const out: EntryRecord[] = [];
    let cursor: Cursor | undefined;
    do {
      const page = await this.harness.session.read.scanEntries(
        { conversationId: this.id, order: "ascending" },
        PAGE,
        cursor,
        options,
      );
      out.push(...page.items);
      cursor = page.next;
    } while (cursor !== undefined);
    return out;
  }

  /** The current view: transcript, `durably.live`, `durably.inbox`, `durably.agent` and usage. */
  async view(options?: CallOptions): Promise<ConversationView> {
    const entries = await this.entries(options);
    const { session } = this.harness;
    const live = (await session.snapshot(LiveDoc, this.id)) ?? LiveDoc.initial();
    const inbox = (await session.snapshot(InboxDoc, this.id)) ?? InboxDoc.initial();
    const agent = await this.configuration();
    const usage = await this.usage();
    return { conversationId: this.id, entries, live, inbox, agent, usage };
  }

  /**
   * Calls `listener(view, ops)` with the full view first (a late joiner
   * starts from the current view), then after every change of the
   * transcript, `durably.live`, `durably.inbox`, `durably.agent` or this
   * conversation's usage. Live progress arrives
   * before it is stored (deferred commits); entries once stored. A listener
   * returning a promise is given the next frame when it settles; at most
   * `maxFrames` (100) wait, then they collapse into one full-view frame.
   * Returns the disposer.
   */
  watch(listener: ViewListener, options?: WatchOptions): () => void {
    if (typeof listener !== "function") throw new TypeError("watch: listener must be a function");
    const watch = new ConversationWatch(
      this.harness.session,
      this.id,
      listener,
      this.harness.onListenerError,
      options,
    );
    return () => watch.stop();
  }
}
