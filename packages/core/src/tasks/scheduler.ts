import { SessionFailed, TaskFaulted, TaskStateError, UnknownRecord } from "../domain/errors.js";
import type { ConversationId, TaskId } from "../domain/ids.js";
import { jsonEqual, type Json } from "../domain/json.js";
import type { TaskOutcome, TaskRecord, TaskStatus } from "../domain/records.js";
import type { CallOptions, Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import type { CommitEvent } from "../session/watches.js";
import type { AnyTaskDefinition } from "./define-task.js";
import { errorInfo } from "./error-info.js";
import { TaskRuntime, viewOf, type RuntimeHost } from "./runtime.js";
import { TaskIndex } from "./task-index.js";
import {
  finalizeIn,
  finishRunningIn,
  markChildrenIn,
  parkIn,
  propagatesAbort,
  recoverIn,
  reserveIn,
} from "./transitions.js";

export interface SchedulerOptions {
  /** Most tasks run at once (phases and abort handlers). Default 32. */
  concurrency?: number;
  /**
   * Where errors go that no caller can receive: a transition commit that
   * rejects (e.g. an `onTerminal` hook throws), a phase that throws after its
   * task already finished. Default: console.error.
   */
  onError?: (error: unknown, taskId: TaskId | undefined) => void;
}

export interface TaskInspection {
  readonly id: TaskId;
  readonly kind: string;
  readonly version: number;
  readonly conversationId: ConversationId;
  readonly owner: TaskId | undefined;
  readonly status: TaskStatus;
  readonly abortRequested: boolean;
  /** A phase, abort handler or transition of this task is in progress in this scheduler. */
  readonly active: boolean;
  /** Why this scheduler cannot move the task on (no definition, a newer version, a failing hook...). */
  readonly blocked?: string;
}

export interface SchedulerInspection {
  readonly started: boolean;
  /** Every task that is not terminal, by id. */
  readonly tasks: readonly TaskInspection[];
  /** The subset of `tasks` that is blocked. */
  readonly blocked: readonly TaskInspection[];
  /** Tasks running a phase or abort handler now. */
  readonly running: number;
}

interface Run {
  controller: AbortController;
  /** Abort was requested while this run held the task. */
  abortSeen: boolean;
  inAbortHandler: boolean;
}

type Resolvers<T> = { resolve: (value: T) => void; reject: (error: unknown) => void };

const DEFAULT_CONCURRENCY = 32;
const PAGE = 256;
const LIVE: readonly TaskStatus[] = ["pending", "running", "waiting", "completing"];
const withScheduler = new WeakSet<Session>();

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function stopReason(): DOMException {
  return new DOMException("the scheduler stopped", "AbortError");
}

/**
 * Runs the tasks of one session: durable reservation, phases off
 * the commit line, waiting on tasks, abort, `completing`, recovery. One
 * scheduler per session at a time; `start()` assumes nothing else runs the
 * session's tasks (storage adapters take a single-owner lock).
 */
export class Scheduler {
  private readonly definitions = new Map<string, AnyTaskDefinition>();
  private readonly concurrency: number;
  private readonly onError: (error: unknown, taskId: TaskId | undefined) => void;
  private index = new TaskIndex();
  private phase: "stopped" | "starting" | "started" | "stopping" = "stopped";
  private unsubscribe: (() => void) | undefined;
  private readonly runs = new Map<number, Run>();
  private readonly inFlight = new Set<number>();
  private readonly recheck = new Set<number>();
  private readonly toCheck = new Set<number>();
  private readonly runnable = new Set<number>();
  private reserving = 0;
  private readonly stuck = new Map<number, string>();
  private readonly work = new Set<Promise<unknown>>();
  private readonly terminalWaiters = new Map<number, Set<Resolvers<TaskRecord>>>();
  private drainWaiters = new Set<() => void>();
  private idleWaiters: Resolvers<void>[] = [];
  private pumpQueued = false;
  private failure: Error | undefined;
  private readonly host: RuntimeHost;

  constructor(
    readonly session: Session,
    definitions: readonly AnyTaskDefinition[],
    options: SchedulerOptions = {},
  ) {
    const given: unknown = definitions;
    if (!Array.isArray(given))
      throw new TypeError("Scheduler: definitions must be an array of defineTask results");
    for (const definition of definitions) {
      if (typeof definition?.name !== "string" || typeof definition.phases !== "object")
        throw new TypeError("Scheduler: every definition must come from defineTask");
      if (this.definitions.has(definition.name))
        throw new TypeError(`Scheduler: task "${definition.name}" is registered twice`);
      this.definitions.set(definition.name, definition);
    }
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1)
      throw new TypeError(`Scheduler: concurrency must be a positive integer, got ${concurrency}`);
    this.concurrency = concurrency;
    this.onError =
      options.onError ??
      ((error, taskId) =>
        console.error(
          `durably scheduler${taskId === undefined ? "" : ` (task ${taskId})`}:`,
          error,
        ));
    this.host = {
      session,
      hasLiveChildren: (id) => this.index.hasLiveChildren(id),
      waitForTerminal: (id, signal) => this.waitForTask(id, { signal }),
    };
  }

  // ---- lifecycle ----------------------------------------------------------

  /**
   * Recovers (every `running` task returns to `pending`: its runner died),
   * loads the live tasks and starts running them.
   */
  async start(options?: CallOptions): Promise<void> {
    if (this.phase !== "stopped")
      throw new TaskStateError(`Scheduler.start: the scheduler is ${this.phase}`);
    if (withScheduler.has(this.session))
      throw new TaskStateError("Scheduler.start: another scheduler runs this session's tasks");
    withScheduler.add(this.session);
    this.phase = "starting";
    this.failure = undefined;
    this.index = new TaskIndex();
    this.stuck.clear();
    const early: CommitEvent[] = [];
    let buffering = true;
    try {
      // Subscribe first, replay after the load: the last event of a task is its newest stored state.
      this.unsubscribe = this.session.subscribeCommits((event) =>
        buffering ? early.push(event) : this.onCommit(event),
      );
      await this.session.commit((tx) => recoverIn(tx), options);
      for (const status of LIVE) {
        let cursor: Cursor | undefined;
        do {
          const page = await this.session.read.scanTasks({ status }, PAGE, cursor, options);
          for (const task of page.items) this.index.observe(task);
          cursor = page.next;
        } while (cursor !== undefined);
      }
    } catch (error) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      withScheduler.delete(this.session);
      this.phase = "stopped";
      throw error;
    }
    buffering = false;
    this.phase = "started";
    for (const task of this.index.values()) this.toCheck.add(task.id);
    for (const event of early) this.onCommit(event);
    this.schedulePump();
  }

  /**
   * Stops taking work, aborts `rt.signal` of every run and waits for the
   * runs to return (phases must honour the signal). Tasks whose phase was cut
   * short stay `running` and return to `pending` at the next start.
   */
  async stop(): Promise<void> {
    if (this.phase === "stopped" || this.phase === "stopping") return;
    this.phase = "stopping";
    for (const run of this.runs.values()) run.controller.abort(stopReason());
    this.releaseDrainWaiters();
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    withScheduler.delete(this.session);
    this.runnable.clear();
    this.toCheck.clear();
    this.recheck.clear();
    this.phase = "stopped";
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter.reject(new TaskStateError("the scheduler stopped"));
  }

  // ---- public operations --------------------------------------------------

  /**
   * Requests abort (durably: `abortRequested`). A running phase sees
   * `rt.signal` abort; owned live tasks are aborted first; then the
   * definition's `abort` handler runs and the task ends `aborted`. A task
   * already `completing` keeps its outcome (its work is done; its owned tasks
   * are aborted). Resolves false when the task is already terminal.
   */
  async abortTask(id: TaskId, options?: CallOptions): Promise<boolean> {
    return this.session.commit(async (tx) => {
      const task = await tx.task(id);
      if (!task) throw new UnknownRecord(`abortTask: task ${id} does not exist`);
      if (task.state.status === "terminal") return false;
      if (!task.abortRequested) await tx.putTask({ ...task, abortRequested: true });
      return true;
    }, options);
  }

  /** Resolves with the task's record once it is terminal. */
  waitForTask(id: TaskId, options?: CallOptions): Promise<TaskRecord> {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<TaskRecord>((resolve, reject) => {
      let set = this.terminalWaiters.get(id);
      if (!set) this.terminalWaiters.set(id, (set = new Set()));
      const waiters = set;
      const onAbort = (): void => done(() => reject(signal?.reason as Error));
      const done = (settle: () => void): void => {
        if (!waiters.delete(entry)) return;
        if (waiters.size === 0 && this.terminalWaiters.get(id) === waiters)
          this.terminalWaiters.delete(id);
        signal?.removeEventListener("abort", onAbort);
        settle();
      };
      const entry: Resolvers<TaskRecord> = {
        resolve: (task) => done(() => resolve(task)),
        reject: (error) => done(() => reject(asError(error))),
      };
      waiters.add(entry);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Registered before the read, so a terminal commit in between is not missed.
      this.session.read.task(id).then(
        (task) => {
          if (!task) entry.reject(new UnknownRecord(`task ${id} does not exist`));
          else if (task.state.status === "terminal") entry.resolve(task);
        },
        (error: unknown) => entry.reject(error),
      );
    });
  }

  /** Every task that is not terminal, with whether it is active here and why it is blocked. */
  inspect(): SchedulerInspection {
    const tasks: TaskInspection[] = [];
    for (const task of this.index.values()) {
      const blocked = this.blockedReason(task);
      tasks.push({
        id: task.id,
        kind: task.kind,
        version: task.version,
        conversationId: task.conversationId,
        owner: task.owner,
        status: task.state.status,
        abortRequested: task.abortRequested,
        active: this.runs.has(task.id) || this.inFlight.has(task.id),
        ...(blocked !== undefined ? { blocked } : {}),
      });
    }
    tasks.sort((a, b) => a.id - b.id);
    return {
      started: this.phase === "started",
      tasks,
      blocked: tasks.filter((t) => t.blocked !== undefined),
      running: this.runs.size,
    };
  }

  /**
   * Resolves when no runnable work remains: nothing running, nothing ready to
   * reserve or to move on (blocked tasks, and tasks waiting on them, do not
   * count). Rejects if the session fails or the scheduler stops first.
   */
  waitForIdle(options?: CallOptions): Promise<void> {
    if (this.phase !== "started" && this.phase !== "starting")
      return Promise.reject(new TaskStateError("waitForIdle: the scheduler is not started"));
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== waiter);
        reject(signal?.reason as Error);
      };
      const waiter: Resolvers<void> = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(asError(error));
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.idleWaiters.push(waiter);
      this.schedulePump();
    });
  }

  // ---- events -------------------------------------------------------------

  private onCommit(event: CommitEvent): void {
    let touched = false;
    for (const write of event.writes) {
      if (write.type !== "task") continue;
      touched = true;
      const task = write.value;
      for (const id of this.index.observe(task)) this.toCheck.add(id);
      if (task.state.status === "terminal") {
        this.runnable.delete(task.id);
        const waiters = this.terminalWaiters.get(task.id);
        if (waiters) for (const waiter of [...waiters]) waiter.resolve(task);
      }
      const run = this.runs.get(task.id);
      if (run && task.abortRequested && !run.abortSeen) {
        run.abortSeen = true;
        if (!run.inAbortHandler)
          run.controller.abort(
            new DOMException(`abort requested for task ${task.id}`, "AbortError"),
          );
      }
    }
    if (!touched) return;
    this.releaseDrainWaiters();
    this.schedulePump();
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = new Set();
    for (const wake of waiters) wake();
  }

  // ---- the pump -----------------------------------------------------------

  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.phase !== "started") return;
    for (const id of [...this.toCheck]) {
      this.toCheck.delete(id);
      this.evaluate(id);
    }
    for (const id of [...this.runnable]) {
      if (this.runs.size + this.reserving >= this.concurrency) break;
      this.runnable.delete(id);
      if (this.runs.has(id) || this.inFlight.has(id)) continue;
      this.reserve(id as TaskId);
    }
    if (
      this.runs.size === 0 &&
      this.inFlight.size === 0 &&
      this.runnable.size === 0 &&
      this.toCheck.size === 0 &&
      !this.pumpQueued
    ) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const waiter of waiters) waiter.resolve();
    }
  }

  private blockedReason(task: TaskRecord): string | undefined {
    const stuck = this.stuck.get(task.id);
    if (stuck !== undefined) return stuck;
    const definition = this.definitions.get(task.kind);
    if (!definition) return `no task definition registered for kind "${task.kind}"`;
    if (task.version > definition.version)
      return `stored at version ${task.version}, newer than the registered definition (version ${definition.version})`;
    if (task.state.status === "running" && !this.runs.has(task.id) && !this.inFlight.has(task.id))
      return "running, but not run by this scheduler (it returns to pending at the next start)";
    return undefined;
  }

  /** Decides what a task needs next, from the index; the commit it starts re-checks everything. */
  private evaluate(id: number): void {
    const task = this.index.get(id);
    if (!task || this.stuck.has(id)) return;
    if (this.inFlight.has(id)) {
      this.recheck.add(id);
      return;
    }
    if (
      propagatesAbort(task) &&
      this.index.liveChildIds(id).some((child) => this.index.get(child)?.abortRequested === false)
    ) {
      void this.transition(id as TaskId, (tx) => markChildrenIn(tx, id as TaskId));
      return;
    }
    if (this.runs.has(id) || this.blockedReason(task) !== undefined) return;
    const drained = !this.index.hasLiveChildren(id);
    switch (task.state.status) {
      case "pending":
        if (!task.abortRequested || drained) this.runnable.add(id);
        break;
      case "waiting":
        if (task.abortRequested ? drained : this.index.maybeSettled(task)) this.runnable.add(id);
        break;
      case "completing":
        if (drained) {
          const definition = this.definitions.get(task.kind) as AnyTaskDefinition;
          void this.transition(id as TaskId, (tx) =>
            finalizeIn(tx, id as TaskId, definition, this.session.clock()),
          );
        }
        break;
      default:
        break;
    }
  }

  /** Runs one scheduler commit for a task, at most one at a time per task. */
  private transition<T>(
    id: TaskId,
    body: (tx: Transaction) => Promise<T>,
    after?: (value: T) => void,
  ): Promise<void> {
    this.inFlight.add(id);
    const done = this.session
      .commit(body)
      .then(
        (value) => after?.(value),
        (error: unknown) => this.transitionFailed(id, error),
      )
      .finally(() => {
        this.inFlight.delete(id);
        if (this.recheck.delete(id)) this.toCheck.add(id);
        this.schedulePump();
      });
    this.track(done);
    return done;
  }

  private transitionFailed(id: TaskId, error: unknown): void {
    if (error instanceof SessionFailed || this.session.failed) {
      this.failSessionWide(this.session.failed ?? error);
      return;
    }
    // Retrying would fail the same way (a hook or migrate that throws): hold the task, say why.
    this.stuck.set(
      id,
      `a scheduler commit failed: ${errorInfo(error).name}: ${errorInfo(error).message}`,
    );
    this.onError(error, id);
  }

  private failSessionWide(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = asError(error);
    for (const run of this.runs.values()) run.controller.abort(error);
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }

  private track(promise: Promise<unknown>): void {
    this.work.add(promise);
    void promise.finally(() => this.work.delete(promise));
  }

  private reserve(id: TaskId): void {
    this.reserving += 1;
    let released = false;
    const release = (): void => {
      if (!released) this.reserving -= 1;
      released = true;
    };
    void this.transition(
      id,
      (tx) => reserveIn(tx, id, this.definitions, this.session.clock()),
      (reservation) => {
        release(); // the run takes the slot over
        if (reservation && this.phase === "started")
          this.startRun(reservation.record, reservation.abort);
      },
    ).finally(release);
  }

  // ---- runs -----------------------------------------------------------------

  private startRun(record: TaskRecord, abort: boolean): void {
    const definition = this.definitions.get(record.kind) as AnyTaskDefinition;
    const run: Run = { controller: new AbortController(), abortSeen: abort, inAbortHandler: false };
    this.runs.set(record.id, run);
    this.track(
      this.drive(run, definition, record)
        .catch((error: unknown) => {
          if (error instanceof SessionFailed || this.session.failed)
            this.failSessionWide(this.session.failed ?? error);
          else this.onError(error, record.id);
        })
        .finally(() => {
          this.runs.delete(record.id);
          this.toCheck.add(record.id);
          this.schedulePump();
        }),
    );
  }

  private get stopping(): boolean {
    return this.phase !== "started" || this.failure !== undefined;
  }

  private abortWanted(run: Run, id: TaskId): boolean {
    return run.abortSeen || this.index.get(id)?.abortRequested === true;
  }

  /** One reserved task: phases in turn until it waits, finishes, faults or is aborted. */
  private async drive(
    run: Run,
    definition: AnyTaskDefinition,
    reserved: TaskRecord,
  ): Promise<void> {
    const id = reserved.id;
    let task = reserved;
    for (;;) {
      if (this.stopping) return;
      if (this.abortWanted(run, id)) return this.runAbort(run, definition, task);
      const checkpoint = (task.state as { checkpoint: Json }).checkpoint as { phase?: unknown };
      const name = typeof checkpoint?.phase === "string" ? checkpoint.phase : undefined;
      const phase =
        name !== undefined && Object.hasOwn(definition.phases, name)
          ? definition.phases[name]
          : undefined;
      if (!phase) {
        const error = new TaskFaulted(
          `task ${id} ("${task.kind}"): checkpoint phase ${JSON.stringify(checkpoint?.phase)} is not one of its phases`,
        );
        await this.finish(definition, id, { kind: "faulted", error: errorInfo(error) });
        return;
      }
      const before = task.state;
      const rt = new TaskRuntime(this.host, definition, task, run.controller.signal);
      let thrown: { error: unknown } | undefined;
      try {
        // Types were erased at registration; the definition checked the checkpoint it receives.
        await phase(viewOf<never, never>(task), rt as TaskRuntime<never, never>);
      } catch (error) {
        thrown = { error };
      } finally {
        rt.end();
      }
      if (this.stopping) return;
      task = rt.latest;
      if (task.state.status !== "running") {
        if (thrown) this.onError(thrown.error, id); // it finished first; the error has nowhere to go
        return;
      }
      if (this.abortWanted(run, id)) continue;
      if (thrown) {
        await this.finish(definition, id, { kind: "faulted", error: errorInfo(thrown.error) });
        return;
      }
      if (jsonEqual(task.state, before)) {
        const error = new TaskFaulted(
          `task ${id} ("${task.kind}"): phase "${name}" returned without committing a new checkpoint or state`,
        );
        await this.finish(definition, id, { kind: "faulted", error: errorInfo(error) });
        return;
      }
    }
  }

  private async runAbort(run: Run, definition: AnyTaskDefinition, task: TaskRecord): Promise<void> {
    const id = task.id;
    if (this.index.hasLiveChildren(id)) {
      // Owned work drains first; give the slot back meanwhile (the pump reserves it again).
      await this.session.commit((tx) => parkIn(tx, id));
      return;
    }
    run.inAbortHandler = true;
    run.controller = new AbortController(); // the handler's signal aborts only when the scheduler stops
    const rt = new TaskRuntime(this.host, definition, task, run.controller.signal);
    let outcome: TaskOutcome;
    try {
      const reason = await definition.abort(
        viewOf<never, never>(task),
        rt as TaskRuntime<never, never>,
      );
      outcome = typeof reason === "string" ? { kind: "aborted", reason } : { kind: "aborted" };
    } catch (error) {
      outcome = { kind: "faulted", error: errorInfo(error) };
    } finally {
      rt.end();
    }
    if (this.stopping) return;
    if (rt.latest.state.status !== "running") return; // the handler finished the task itself
    await this.finish(definition, id, outcome);
  }

  private async finish(
    definition: AnyTaskDefinition,
    id: TaskId,
    outcome: TaskOutcome,
  ): Promise<void> {
    try {
      await this.session.commit((tx) =>
        finishRunningIn(tx, id, definition, outcome, this.session.clock()),
      );
    } catch (error) {
      if (error instanceof SessionFailed || this.session.failed) throw error;
      this.stuck.set(
        id,
        `ending the task failed: ${errorInfo(error).name}: ${errorInfo(error).message}`,
      );
      this.onError(error, id);
    }
  }
}
