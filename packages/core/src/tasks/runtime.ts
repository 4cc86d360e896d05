import { TaskStateError, UnknownRecord } from "../domain/errors.js";
import type { TaskId } from "../domain/ids.js";
import { copyJson, type Json, type JsonObject } from "../domain/json.js";
import type { TaskOutcome, TaskRecord } from "../domain/records.js";
import type { CallOptions } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import type { AnyTaskDefinition, TaskCheckpoint, TaskNext, TaskView } from "./define-task.js";
import { MemoInterrupted } from "../domain/errors.js";
import { memoEntry, type MemoEntry, type MemoOptions } from "./memo.js";
import { interpretNext } from "./next-state.js";
import { readClock } from "./clock.js";
import { writeFinish, type Stamp } from "./transitions.js";
import { longTimeout } from "./long-timeout.js";

/** What a runtime needs from its scheduler. */
export interface RuntimeHost {
  readonly session: Session;
  /** Whether the task owns live tasks, as far as stored commits tell. */
  hasLiveChildren(id: TaskId): boolean;
  /**
   * Resolves with the terminal record of `id`, awaited by a phase of
   * `caller` (rejects `UnknownRecord` when it does not exist, `TaskFaulted`
   * when `id` waits on `caller`: the wait would never end).
   */
  awaitTask(caller: TaskId, id: TaskId, signal: AbortSignal | undefined): Promise<TaskRecord>;
  /** Reads the clock for a timestamp (a `TypeError` when it is not a finite number). */
  readonly stamp: Stamp;
}

export function viewOf<Input extends Json, C extends TaskCheckpoint>(
  record: TaskRecord,
): TaskView<Input, C> {
  const state = record.state as { checkpoint?: Json };
  return {
    id: record.id,
    conversationId: record.conversationId,
    kind: record.kind,
    version: record.version,
    input: record.input as Input,
    checkpoint: state.checkpoint as C,
    abortRequested: record.abortRequested,
    owner: record.owner,
    memos: record.memos ?? {},
    record,
  };
}

/** `tx` as the callback sees it, noting every task it creates owned by `owner`. */
function noticingOwnedCreates(tx: Transaction, owner: TaskId, noticed: () => void): Transaction {
  return new Proxy(tx, {
    get(target, property) {
      if (property === "createTask")
        return (...args: Parameters<Transaction["createTask"]>) =>
          target.createTask(...args).then((id) => {
            const ownership = args[2]?.ownership;
            if (ownership?.kind === "task" && ownership.taskId === owner) noticed();
            return id;
          });
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}

function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  if (!(ms >= 0) || !Number.isFinite(ms))
    return Promise.reject(new TypeError(`rt.sleep: ms must be a non-negative number, got ${ms}`));
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      cancel();
      reject(signal.reason as Error);
    };
    const cancel = longTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The task runtime `rt` handed to a phase or an abort handler.
 * It is valid while that call runs and the task is `running` for it.
 */
export class TaskRuntime<Input extends Json = Json, C extends TaskCheckpoint = TaskCheckpoint> {
  readonly taskId: TaskId;
  /** Aborted when abort is requested for the task or the scheduler stops. */
  readonly signal: AbortSignal;
  private latestRecord: TaskRecord;
  private ended: string | undefined;

  /** @internal Created by the scheduler. */
  constructor(
    private readonly host: RuntimeHost,
    private readonly definition: AnyTaskDefinition,
    record: TaskRecord,
    signal: AbortSignal,
  ) {
    this.taskId = record.id;
    this.latestRecord = record;
    this.signal = signal;
  }

  /** The task as this run last committed or reserved it. */
  get task(): TaskView<Input, C> {
    return viewOf(this.latestRecord);
  }

  /** @internal The record after this run's last commit. */
  get latest(): TaskRecord {
    return this.latestRecord;
  }

  /** @internal The call this runtime served has returned (or was given up on, `why`): later use throws. */
  end(why?: string): void {
    this.ended ??= why ?? `the phase of task ${this.taskId} that this runtime served has returned`;
  }

  /** The session clock (ms since the epoch); a `TypeError` if the clock returns anything but a finite number. */
  now(): number {
    return readClock(this.host.session, `rt.now() in task ${this.taskId}`);
  }

  private checkUsable(what: string): void {
    if (this.ended !== undefined) throw new TaskStateError(`${what}: ${this.ended}`);
  }

  private async onLine<T>(
    what: string,
    body: (tx: Transaction, current: TaskRecord) => Promise<T>,
    options?: CallOptions,
  ): Promise<T> {
    this.checkUsable(what);
    return this.host.session.commit(async (tx) => {
      const current = await tx.task(this.taskId);
      if (!current) throw new UnknownRecord(`${what}: task ${this.taskId} does not exist`);
      if (current.state.status !== "running")
        throw new TaskStateError(
          `${what}: task ${this.taskId} is ${current.state.status}, not running`,
        );
      return body(tx, current);
    }, options);
  }

  /**
   * Runs `fn` on the commit line with the current task; what it returns
   * becomes the task's next state (a checkpoint, a whole state, or
   * `undefined` for none), stored atomically with everything `fn` wrote in
   * `tx` (entries, documents, child tasks). Finishing while the task owns
   * live tasks stores `completing`, terminal once they are. Resolves with the
   * task as committed.
   */
  async commit(
    fn: (tx: Transaction, current: TaskView<Input, C>) => TaskNext<C> | Promise<TaskNext<C>>,
    options?: CallOptions,
  ): Promise<TaskView<Input, C>> {
    if (typeof fn !== "function") throw new TypeError("rt.commit: fn must be a function");
    const record = await this.onLine(
      "rt.commit",
      async (tx, current) => {
        let created = false;
        // Before the callback: its writes would make these table reads throw.
        const read = this.definition.beforeTerminal
          ? { value: await this.definition.beforeTerminal(tx, current) }
          : undefined;
        const view = noticingOwnedCreates(tx, this.taskId, () => (created = true));
        const next = interpretNext(
          this.definition,
          this.taskId,
          await fn(view, viewOf<Input, C>(current)),
        );
        if (next === undefined) return current;
        if (!next.finish) return tx.putTask({ ...current, state: next.state });
        return writeFinish(
          tx,
          this.definition,
          current,
          next.outcome,
          created || this.host.hasLiveChildren(this.taskId),
          this.host.stamp,
          read,
        );
      },
      options,
    );
    this.latestRecord = record;
    return viewOf(record);
  }

  private async putMemo(key: string, entry: MemoEntry): Promise<void> {
    this.latestRecord = await this.onLine("rt.memo", (tx, current) =>
      tx.putTask({ ...current, memos: { ...current.memos, [key]: entry as JsonObject } }),
    );
  }

  /**
   * A durable memo: returns the result committed under `memos[key]`, or runs
   * `fn` and commits its result (JSON). With the default guard
   * "atMostOnce", an intent marker is committed before `fn` runs, so `fn`
   * runs at most once per key across crashes; a key whose run was cut short
   * (crash or throw after the marker, before the result) throws
   * `MemoInterrupted` from then on. See `MemoOptions` for "atLeastOnce".
   */
  async memo<T extends Json | void>(
    key: string,
    fn: () => T | Promise<T>,
    options: MemoOptions = {},
  ): Promise<T> {
    this.checkUsable("rt.memo");
    if (typeof key !== "string" || key === "")
      throw new TypeError("rt.memo: key must be a non-empty string");
    if (typeof fn !== "function") throw new TypeError("rt.memo: fn must be a function");
    const guard = options.guard ?? "atMostOnce";
    if (guard !== "atMostOnce" && guard !== "atLeastOnce")
      throw new TypeError(`rt.memo: guard must be "atMostOnce" or "atLeastOnce"`);
    const known = memoEntry(this.latestRecord.memos, key);
    if (known?.status === "done") return known.value as T;
    if (known?.status === "started")
      throw new MemoInterrupted(
        key,
        `memo "${key}" of task ${this.taskId} was started but its result was never committed: the effect may or may not have run`,
      );
    if (guard === "atMostOnce") await this.putMemo(key, { status: "started" });
    const value = await fn();
    const stored =
      value === undefined ? undefined : copyJson(value, `memos[${JSON.stringify(key)}]`);
    await this.putMemo(
      key,
      stored === undefined ? { status: "done" } : { status: "done", value: stored },
    );
    return value;
  }

  /** The stored record of any task (`undefined` if there is none). */
  getTask(id: TaskId, options?: CallOptions): Promise<TaskRecord | undefined> {
    return this.host.session.read.task(id, options);
  }

  /**
   * Resolves with the task's record once it is terminal. In-memory waiting
   * holds this run's concurrency slot; to wait durably on tasks, commit a
   * `waiting` state instead. Rejects with `TaskFaulted` when `id` waits
   * (directly, or through tasks it waits on or owns) on this task: that
   * wait would never end.
   */
  waitForTask(id: TaskId, options?: CallOptions): Promise<TaskRecord> {
    return this.host.awaitTask(this.taskId, id, options?.signal ?? this.signal);
  }

  /** The outcomes of terminal tasks, in `ids` order; `undefined` for a task that is not terminal yet. */
  async outcomes(
    ids: readonly TaskId[],
    options?: CallOptions,
  ): Promise<(TaskOutcome | undefined)[]> {
    if (!Array.isArray(ids)) throw new TypeError("rt.outcomes: ids must be an array of task ids");
    const out: (TaskOutcome | undefined)[] = [];
    for (const id of ids as readonly unknown[] as readonly TaskId[]) {
      const task = await this.host.session.read.task(id, options);
      if (!task) throw new UnknownRecord(`rt.outcomes: task ${id} does not exist`);
      out.push(task.state.status === "terminal" ? task.state.outcome : undefined);
    }
    return out;
  }

  /** Resolves after `ms` (rejects with the signal's reason when `rt.signal` aborts first). */
  sleep(ms: number, options?: CallOptions): Promise<void> {
    const signal = options?.signal ? AbortSignal.any([options.signal, this.signal]) : this.signal;
    return sleepFor(ms, signal);
  }
}
