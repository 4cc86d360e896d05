import { ConversationBusy, UnknownRecord } from "../domain/errors.js";
import type { ConversationId, EntryId, SubmissionId, TaskId } from "../domain/ids.js";
import { copyJson, jsonEqual } from "../domain/json.js";
import type {
  ContentPart,
  EntryRecord,
  SubmissionRecord,
  SubmissionStatus,
} from "../domain/records.js";
import type { CallOptions, Cursor } from "../storage/port.js";
import {
  AgentDoc,
  applyAgentChange,
  checkAgentConfig,
  type AgentConfig,
  type AgentState,
} from "./agent.js";
import { checkKeepLastTurns } from "./compaction-policy.js";
import { compactionResult, type CompactionResult } from "./compaction-task.js";
import { checkContent } from "./content.js";
import type { HarnessContext } from "./harness-context.js";
import { InboxDoc } from "./inbox.js";
import { LiveDoc } from "./live.js";
import { DEFAULT_MODEL } from "./models.js";
import { isBusy, placeInput } from "./placement.js";
import { conversationStream, type StreamOptions } from "./stream.js";
import type { ConversationEvent } from "./stream-events.js";
import { Submission } from "./submission.js";
import { UsageDoc, usageReport } from "./usage.js";
import {
  ConversationWatch,
  type ConversationView,
  type ViewListener,
  type WatchOptions,
} from "./watch.js";

/** What `conversation.submit` takes. */
export interface SubmitInput {
  type: "input";
  /** The user's message: text, or text and image parts. */
  content: string | ContentPart[];
  /** The name of the model (of `Harness.open`'s `models`) that answers it; default "default". */
  model?: string;
  /** Makes the submit idempotent: a retry (even after a restart) returns the existing submission. */
  requestId?: string;
  /** When the conversation is answering something: queue a follow-up (default) or throw `ConversationBusy`. */
  whenBusy?: "followUp" | "reject";
}

const PAGE = 256;

const SUBMIT_FIELDS = ["type", "content", "model", "requestId", "whenBusy"];

/** Checks a submit input; returns its content, copied (a string, or checked parts). */
function checkSubmit(input: SubmitInput, models: ReadonlySet<string>): string | ContentPart[] {
  if (typeof input !== "object" || input === null)
    throw new TypeError("submit: the input must be an object");
  const i = input as unknown as Record<string, unknown>;
  for (const key of Object.keys(i))
    if (!SUBMIT_FIELDS.includes(key))
      throw new TypeError(`submit: ${key} is not a submit field (${SUBMIT_FIELDS.join(", ")})`);
  if (i.type !== "input")
    throw new TypeError(`submit: type must be "input", got ${JSON.stringify(i.type)}`);
  const content = checkContent(i.content, "submit: content");
  if (i.model !== undefined && (typeof i.model !== "string" || !models.has(i.model)))
    throw new TypeError(
      `submit: model ${JSON.stringify(i.model)} is not one of the harness's models (${[...models].map((m) => `"${m}"`).join(", ")})`,
    );
  if (i.requestId !== undefined && (typeof i.requestId !== "string" || i.requestId === ""))
    throw new TypeError("submit: requestId must be a non-empty string");
  if (i.whenBusy !== undefined && i.whenBusy !== "followUp" && i.whenBusy !== "reject")
    throw new TypeError('submit: whenBusy must be "followUp" or "reject"');
  return content;
}

/** A handle on one conversation of a harness. */
export class Conversation {
  /** @internal Created by the harness. */
  constructor(
    private readonly harness: HarnessContext,
    readonly id: ConversationId,
  ) {}

  /**
   * Submits an input. Idle: placed at once (user entry +
   * generation, one commit). Busy: queued in `durably.inbox` as a follow-up,
   * placed when the running answer settles; with `whenBusy: "reject"` it
   * throws `ConversationBusy` and stores nothing. With a `requestId`, a
   * retried submit returns the existing submission (the content must match).
   * Starts the scheduler.
   */
  async submit(input: SubmitInput, options?: CallOptions): Promise<Submission> {
    const content = checkSubmit(input, this.harness.modelNames);
    const { session, generation } = this.harness;
    const { requestId, model } = input;
    const record = await session.commit(async (tx): Promise<SubmissionRecord> => {
      if (requestId !== undefined) {
        const existing = await tx.submissionByRequest(this.id, requestId);
        if (existing) {
          if (existing.content !== undefined && !jsonEqual(existing.content, content))
            throw new TypeError(
              `submit: requestId ${JSON.stringify(requestId)} was used by submission ${existing.id} with different content`,
            );
          return existing;
        }
      }
      const live = await tx.doc(LiveDoc, this.id);
      const busy = isBusy(live);
      if (busy && input.whenBusy === "reject")
        throw new ConversationBusy(
          `conversation ${this.id} is ${live.run ? `answering submission ${live.run.submissionId}` : "compacting"}; not queued (whenBusy: "reject")`,
        );
      const created = await tx.createSubmission(this.id, {
        type: "input",
        content,
        ...(requestId !== undefined ? { requestId } : {}),
      });
      if (busy) {
        const inbox = await tx.doc(InboxDoc, this.id);
        inbox.queued.push({
          submissionId: created.id,
          content,
          ...(model !== undefined ? { model } : {}),
        });
        return created;
      }
      return placeInput(tx, generation, live, this.id, created.id, content, model);
    }, options);
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
    const { status, ...call } = options;
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
   * compaction, and withdraws every queued follow-up the same way.
   * Resolves with how many submissions it aborted.
   */
  async abort(options?: CallOptions): Promise<number> {
    const { session, scheduler } = this.harness;
    const { queued, task, compaction } = await session.commit(async (tx) => {
      const inbox = await tx.doc(InboxDoc, this.id);
      const live = await tx.doc(LiveDoc, this.id);
      const waiting = inbox.queued.map((q) => q.submissionId as SubmissionId);
      if (waiting.length > 0) inbox.queued.splice(0, waiting.length);
      for (const id of waiting)
        await tx.settleSubmission(id, { status: "unanswered", reason: "aborted" });
      const compacting = live.run === null ? live.compaction?.taskId : undefined;
      return {
        queued: waiting.length,
        task: live.run?.taskId as TaskId | undefined,
        compaction: compacting as TaskId | undefined,
      };
    }, options);
    let running = 0;
    if (task !== undefined && (await scheduler.abortTask(task, options))) running = 1;
    if (compaction !== undefined) await scheduler.abortTask(compaction, options);
    if (task !== undefined || compaction !== undefined) await this.harness.resume(options);
    return queued + running;
  }

  /**
   * A new conversation that sees this one's entries up to and including
   * `at` (default: the newest visible entry). It starts idle, with an empty
   * inbox.
   */
  async fork(options: CallOptions & { at?: EntryId } = {}): Promise<Conversation> {
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
