import { SessionClosed, UnknownRecord } from "../domain/errors.js";
import {
  ROOT_CONVERSATION_ID,
  type ConversationId,
  type SubmissionId,
  type TaskId,
} from "../domain/ids.js";
import type { SubmissionRecord } from "../domain/records.js";
import type { CallOptions, Storage } from "../storage/port.js";
import { Session, type SessionSettings } from "../session/session.js";
import { waitingApprovals, type WaitingApproval } from "./waiting-approvals.js";
import { reportToConsole, type ListenerErrorHandler } from "../session/watches.js";
import { Scheduler } from "../tasks/scheduler.js";
import { copyJson } from "../domain/json.js";
import { resolveHooks, type AgentDefaults } from "./agent.js";
import { checkHooks, type Hooks } from "./hooks.js";
import { createCompactionTask } from "./compaction-task.js";
import { compactionPolicy, type CompactionSettings } from "./compaction-policy.js";
import { Conversation } from "./conversation.js";
import { createGenerationTask, type CompactionPolicy } from "./generation-task.js";
import type { HarnessContext } from "./harness-context.js";
import { assembleInstructions, type Instructions } from "./instructions.js";
import type { Model, ModelSettings } from "./model.js";
import { modelsByName, type ModelRegistration, type RegisteredModel } from "./models.js";
import { placeNext } from "./placement.js";
import { reconcile } from "./reconcile.js";
import { retryPolicy, type RetrySettings } from "./retry-policy.js";
import { toolsByName, type Tool } from "./tool.js";
import { outputBound, type ToolOutputBound } from "./tool-output.js";
import { createToolTask } from "./tool-task.js";
import { checkKeys, described } from "../domain/option-keys.js";
import { UsageDoc, usageReport, type UsageReport } from "./usage.js";

export interface HarnessSettings extends SessionSettings {
  /** Most tasks (generations and tool calls) running at once. Default 32. */
  concurrency?: number;
  /** Sent with every model request as `settings` (which keys a model takes, its adapter says). */
  model?: ModelSettings;
  /** Durable retry of failed model calls (`maxAttempts` 5, `initialDelayMs` 1,000, `maxDelayMs` 30,000). */
  retry?: RetrySettings;
  /** Automatic compaction (`auto` true, `threshold` 0.8 of a model's `contextWindow`, `keepLastTurns` 2). */
  compaction?: CompactionSettings;
  /** How much of a tool's streamed output its live slot keeps (`maxBytes` 51,200, `maxLines` 2,000). */
  toolOutput?: ToolOutputBound;
  /**
   * How long a tool or model call gets to return after its signal aborted
   * (`close()`, or an abort of its conversation) before the harness gives
   * up on it. Default 3,000 ms. See `HarnessCloseReport`.
   */
  stopGraceMs?: number;
}

/** What `close()` resolves with. */
export interface HarnessCloseReport {
  /**
   * Tasks (generations, tool calls) whose code ignored its aborted signal
   * past `settings.stopGraceMs`: close went on without them. Each stays as
   * stored and resumes at the next open (a `replay: "unsafe"` tool gets an
   * interrupted result); nothing the abandoned call does later is stored.
   */
  readonly notStopped: readonly TaskId[];
}

export interface HarnessOptions extends CallOptions {
  /** The model; the same as `models: { default: model }`. */
  model?: Model | ModelRegistration;
  /**
   * Models by name, each a model or `{ model, contextWindow?, prices?, compactAt? }`;
   * "default" answers every input whose conversation and submit name no other.
   */
  models?: Readonly<Record<string, Model | ModelRegistration>>;
  /** The tools, by name: a conversation's configuration may offer some of them only. */
  // Tools of any argument type (their `execute` is checked against their own schema).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools?: readonly Tool<any>[];
  /**
   * What the model is told first, sent as `system` with every request: a
   * string, or sections `[{ id, text }]` joined in order. Code, not data:
   * never stored, so a changed text applies from the next model call on.
   */
  instructions?: Instructions;
  /**
   * Hooks around every conversation's steps (plain functions, never
   * stored): one set, or several called in order.
   */
  hooks?: Hooks | readonly Hooks[];
  /** Hook sets by name, which `conversation.configure({ hooks: [names] })` adds after `hooks`. */
  hookSets?: Readonly<Record<string, Hooks>>;
  settings?: HarnessSettings;
  /** Milliseconds since the epoch (tasks stamp it). Default `Date.now`. */
  clock?: () => number;
  /** Where errors of watchers and of the scheduler go (default: console.error). */
  onError?: ListenerErrorHandler;
}

/** The options `open` checked, in the form the tasks use. */
interface Checked {
  models: Map<string, RegisteredModel>;
  tools: ReadonlyMap<string, Tool>;
  instructions: Instructions | undefined;
  settings: ModelSettings | undefined;
  retry: ReturnType<typeof retryPolicy>;
  compaction: CompactionPolicy;
  outputBound: ReturnType<typeof outputBound>;
  hooks: readonly Hooks[];
  hookSets: Map<string, Hooks>;
}

const OPTION_FIELDS = [
  "model",
  "models",
  "tools",
  "instructions",
  "hooks",
  "hookSets",
  "settings",
  "clock",
  "onError",
  "signal",
];

const SETTING_FIELDS = [
  "progress",
  "concurrency",
  "stopGraceMs",
  "model",
  "retry",
  "compaction",
  "toolOutput",
];

/** `settings`' own fields (the scheduler's and the session's): checked here, before anything opens. */
function checkSettings(settings: unknown): void {
  if (settings === undefined) return;
  const s = checkKeys(settings, SETTING_FIELDS, "Harness.open", {
    path: "settings",
    what: "a setting",
  });
  const { concurrency, stopGraceMs, progress } = s;
  if (concurrency !== undefined && !(Number.isSafeInteger(concurrency) && Number(concurrency) >= 1))
    throw new TypeError(
      `Harness.open: settings.concurrency: must be a positive integer, got ${described(concurrency)}`,
    );
  if (
    stopGraceMs !== undefined &&
    !(typeof stopGraceMs === "number" && Number.isFinite(stopGraceMs) && stopGraceMs >= 0)
  )
    throw new TypeError(
      `Harness.open: settings.stopGraceMs: must be a non-negative number of milliseconds, got ${described(stopGraceMs)}`,
    );
  if (progress !== undefined) {
    const { persistWithinMs } = checkKeys(progress, ["persistWithinMs"], "Harness.open", {
      path: "settings.progress",
      what: "a progress setting",
    });
    if (
      persistWithinMs !== undefined &&
      !(
        typeof persistWithinMs === "number" &&
        Number.isFinite(persistWithinMs) &&
        persistWithinMs >= 0
      )
    )
      throw new TypeError(
        `Harness.open: settings.progress.persistWithinMs: must be a non-negative number of milliseconds, got ${described(persistWithinMs)}`,
      );
  }
}

function checkOptions(options: HarnessOptions): Checked {
  checkKeys(options, OPTION_FIELDS, "Harness.open");
  checkSettings(options.settings);
  const models = modelsByName(options);
  const tools = toolsByName((options.tools ?? []) as readonly Tool[]);
  assembleInstructions(options.instructions, "Harness.open: options.instructions");
  const instructions =
    options.instructions === undefined
      ? undefined
      : (copyJson(options.instructions, "options.instructions") as Instructions);
  const model = options.settings?.model;
  if (model !== undefined && (typeof model !== "object" || model === null || Array.isArray(model)))
    throw new TypeError("Harness.open: settings.model must be an object of model settings");
  const settings =
    model === undefined ? undefined : (copyJson(model, "settings.model") as ModelSettings);
  const given = options.hooks;
  const hooks = (given === undefined ? [] : Array.isArray(given) ? given : [given]).map(
    (h: unknown, i: number) =>
      checkHooks(h, Array.isArray(given) ? `Harness.open: hooks[${i}]` : "Harness.open: hooks"),
  );
  const setsGiven = options.hookSets;
  if (
    setsGiven !== undefined &&
    (typeof setsGiven !== "object" || setsGiven === null || Array.isArray(setsGiven))
  )
    throw new TypeError("Harness.open: hookSets must be an object of hook sets by name");
  const hookSets = new Map(
    Object.entries(setsGiven ?? {}).map(([name, h]) => [
      name,
      checkHooks(h, `Harness.open: hookSets.${name}`),
    ]),
  );
  return {
    models,
    tools,
    hooks,
    hookSets,
    instructions,
    settings,
    retry: retryPolicy(options.settings?.retry),
    compaction: compactionPolicy(options.settings?.compaction),
    outputBound: outputBound(options.settings?.toolOutput),
  };
}

interface SettleWaiter {
  resolve(record: SubmissionRecord): void;
  reject(error: Error): void;
}

function isSettled(record: SubmissionRecord): boolean {
  return record.status === "done" || record.status === "unanswered";
}

/**
 * The harness: conversations, submissions, generation and tool
 * tasks over one session. `open` opens the session and reconciles (a
 * harness task a dead process left `running` returns to `pending`);
 * `resume()` (or the first submit or wait) starts the scheduler, so
 * interrupted runs pick up where their last commit left them.
 */
export class Harness {
  readonly session: Session;
  readonly scheduler: Scheduler;
  private readonly context: HarnessContext;
  private readonly waiters = new Map<number, Set<SettleWaiter>>();
  private readonly unsubscribe: () => void;
  private starting: Promise<void> | undefined;
  private closing: Promise<HarnessCloseReport> | undefined;
  private readonly closed = new AbortController();

  private constructor(session: Session, options: HarnessOptions, checked: Checked) {
    this.session = session;
    const onError = options.onError ?? reportToConsole;
    const { tools } = checked;
    const defaults: AgentDefaults = {
      models: checked.models,
      tools,
      ...(checked.instructions !== undefined ? { instructions: checked.instructions } : {}),
      ...(checked.settings !== undefined ? { settings: checked.settings } : {}),
      hooks: checked.hooks,
      hookSets: checked.hookSets,
    };
    const toolTask = createToolTask({
      session,
      tools,
      outputBound: checked.outputBound,
      hooksFor: (agent) => resolveHooks(agent, defaults),
      subagents: {
        session,
        generation: () => generation,
        registry: {
          models: new Set(checked.models.keys()),
          tools: new Set(tools.keys()),
          hooks: new Set(checked.hookSets.keys()),
        },
      },
    });
    const compaction = createCompactionTask({
      session,
      defaults,
      retry: checked.retry,
      placeNext: (tx, live, conversationId) => placeNext(tx, generation, live, conversationId),
    });
    const generation = createGenerationTask({
      session,
      defaults,
      toolTask,
      compactionTask: compaction,
      compaction: checked.compaction,
      retry: checked.retry,
    });
    this.scheduler = new Scheduler(session, [generation, toolTask, compaction], {
      ...(options.settings?.concurrency !== undefined
        ? { concurrency: options.settings.concurrency }
        : {}),
      ...(options.settings?.stopGraceMs !== undefined
        ? { stopGraceMs: options.settings.stopGraceMs }
        : {}),
      onError: (error, taskId) =>
        onError(error, `scheduler${taskId === undefined ? "" : ` (task ${taskId})`}`),
    });
    this.unsubscribe = session.subscribeCommits((event) => {
      if (this.waiters.size === 0) return;
      for (const write of event.writes)
        if (write.type === "submission" && isSettled(write.value)) this.wake(write.value);
    });
    // Nothing settles after a failure: pending waits and streams end with it at once.
    session.onFailure((failure) => {
      this.rejectWaiters(failure);
      this.closed.abort(failure);
    });
    this.context = {
      session,
      scheduler: this.scheduler,
      generation,
      compaction,
      compactionPolicy: checked.compaction,
      onListenerError: onError,
      modelNames: new Set(checked.models.keys()),
      toolNames: new Set(tools.keys()),
      hookNames: new Set(checked.hookSets.keys()),
      closing: this.closed.signal,
      resume: (o) => this.resume(o),
      settled: (id, o) => this.settled(id, o),
    };
  }

  /** Opens a harness over a storage it then owns (`close()` closes both). */
  static async open(storage: Storage, options: HarnessOptions): Promise<Harness> {
    if (typeof options !== "object" || options === null)
      throw new TypeError("Harness.open: options must be an object with a model");
    if (options.clock !== undefined && typeof options.clock !== "function")
      throw new TypeError("Harness.open: options.clock must be a function returning milliseconds");
    // Check everything before anything opens: a bad option stores nothing.
    const checked = checkOptions(options);
    const session = await Session.open(storage, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.settings?.progress ? { settings: { progress: options.settings.progress } } : {}),
      ...(options.onError ? { onListenerError: options.onError } : {}),
    });
    // From here on the session owns the storage: whatever fails closes both before it propagates.
    try {
      await reconcile(session);
      return new Harness(session, options, checked);
    } catch (error) {
      await session.close().catch(() => undefined);
      throw error;
    }
  }

  /** The root conversation (id 1), which every storage has. */
  root(): Promise<Conversation> {
    return Promise.resolve(new Conversation(this.context, ROOT_CONVERSATION_ID));
  }

  /** A handle on an existing conversation (rejects `UnknownRecord` when there is none). */
  async conversation(id: ConversationId, options?: CallOptions): Promise<Conversation> {
    if (!Number.isSafeInteger(id) || id < 1)
      throw new TypeError(
        `Harness.conversation: id must be a positive integer conversation id, got ${described(id)}`,
      );
    const record = await this.session.read.conversation(id, options);
    if (!record) throw new UnknownRecord(`conversation ${id} does not exist`);
    return new Conversation(this.context, record.id);
  }

  /** A new, empty conversation. */
  async createConversation(options?: CallOptions): Promise<Conversation> {
    const record = await this.session.commit(
      (tx) => tx.createConversation({ ownership: { kind: "ownerless" } }),
      options,
    );
    return new Conversation(this.context, record.id);
  }

  /** Starts the scheduler (idempotent): interrupted runs resume from their last commit. */
  resume(options?: CallOptions): Promise<void> {
    if (this.closing) return Promise.reject(new SessionClosed("the harness is closed"));
    this.starting ??= this.scheduler.start(options).catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  /**
   * The usage ledger (`durably.usage`): model calls and their tokens (and
   * cost, for models with prices), in total and per model name, for the
   * whole session or, with `conversationId`, for one conversation (zeros
   * when it made no call).
   */
  async usage(options: { conversationId?: ConversationId } = {}): Promise<UsageReport> {
    const { conversationId } = checkKeys(options, ["conversationId"], "usage") as {
      conversationId?: ConversationId;
    };
    if (
      conversationId !== undefined &&
      (!Number.isSafeInteger(conversationId) || conversationId < 1)
    )
      throw new TypeError(
        `usage: conversationId must be a positive integer, got ${described(conversationId)}`,
      );
    return usageReport(await this.session.snapshot(UsageDoc, null), conversationId);
  }

  /**
   * Every tool call waiting for a person's decision, in every conversation,
   * oldest first, each with its `conversationId`: a subagent's calls too
   * (they wait in a child conversation, and keep the parent's tool, and so
   * `whenIdle()`, waiting). Decide one with
   * `(await harness.conversation(conversationId)).approve(toolCallId, …)`.
   */
  approvals(options?: CallOptions): Promise<WaitingApproval[]> {
    return waitingApprovals(this.session, options);
  }

  /** Resolves when no task can make progress (everything answered, or waiting on something blocked). */
  async whenIdle(options?: CallOptions): Promise<void> {
    await this.resume(options);
    await this.scheduler.waitForIdle(options);
  }

  private settled(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord> {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const failed = this.session.failed;
    if (failed) return Promise.reject(failed);
    return new Promise<SubmissionRecord>((resolve, reject) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      const waiters = set;
      const done = (settle: () => void): void => {
        if (!waiters.delete(entry)) return;
        if (waiters.size === 0) this.waiters.delete(id);
        signal?.removeEventListener("abort", onAbort);
        settle();
      };
      const entry: SettleWaiter = {
        resolve: (record) => done(() => resolve(record)),
        reject: (error) => done(() => reject(error)),
      };
      const onAbort = (): void => entry.reject(signal?.reason as Error);
      waiters.add(entry);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Registered before the read, so a settlement stored in between is not missed.
      this.session.read.submission(id).then(
        (record) => {
          if (!record) entry.reject(new UnknownRecord(`submission ${id} does not exist`));
          else if (isSettled(record)) entry.resolve(record);
        },
        (error: unknown) => entry.reject(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }

  private wake(record: SubmissionRecord): void {
    const set = this.waiters.get(record.id);
    if (set) for (const waiter of [...set]) waiter.resolve(record);
  }

  private rejectWaiters(error: Error): void {
    for (const set of [...this.waiters.values()])
      for (const waiter of [...set]) waiter.reject(error);
  }

  /**
   * Stops the scheduler (running phases see their signal abort and stop;
   * their tasks resume at the next open), stores pending progress and closes
   * the session and storage. Idempotent. Pending `wait()`s reject. A tool
   * or model call that ignores its signal is given up on after
   * `settings.stopGraceMs`; its task is named in the report's `notStopped`.
   */
  close(): Promise<HarnessCloseReport> {
    this.closing ??= (async () => {
      await this.starting?.catch(() => undefined);
      const { notStopped } = await this.scheduler.stop();
      this.unsubscribe();
      this.rejectWaiters(
        new SessionClosed("the harness was closed before this submission settled"),
      );
      this.closed.abort(new SessionClosed("the harness was closed"));
      await this.session.close();
      return { notStopped };
    })();
    return this.closing;
  }
}
