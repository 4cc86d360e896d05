import { SessionFailed, TaskStateError } from "../domain/errors.js";
import type { TaskId } from "../domain/ids.js";
import { jsonEqual } from "../domain/json.js";
import type { TaskRecord } from "../domain/records.js";
import type { CallOptions } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { Transaction } from "../session/transaction.js";
import type { CommitEvent } from "../session/watches.js";
import { AbortMarks, abortTree } from "./abort-marks.js";
import { readClock } from "./clock.js";
import {
  checkSchedulerOptions,
  type SchedulerOptions,
  type SchedulerStopReport,
} from "./scheduler-options.js";
import type { AnyTaskDefinition } from "./define-task.js";
import { asError, errorInfo } from "./error-info.js";
import { AbortGrace, giveUpAfterGrace, notStoppedError } from "./give-up.js";
import { IdleWaiters } from "./idle-waiters.js";
import { inspectScheduler, type SchedulerInspection } from "./inspection.js";
import type { RuntimeHost } from "./runtime.js";
import { loadLiveTasks, TaskIndex } from "./task-index.js";
import { driveTask, type Run, type RunContext } from "./task-run.js";
import { TerminalWaiters } from "./terminal-waiters.js";
import {
  finalizeIn,
  markAbortIn,
  missingCode,
  orphanIn,
  propagatesAbort,
  recoverIn,
  reserveIn,
  type Stamp,
} from "./transitions.js";
import {
  closerOf,
  cycleInIndex,
  faultWaitCycleIn,
  newWaitEdges,
  refusedAwait,
} from "./wait-graph.js";

export type { SchedulerInspection, TaskInspection } from "./inspection.js";
export type { SchedulerOptions, SchedulerStopReport } from "./scheduler-options.js";

const withScheduler = new WeakSet<Session>();

function stopReason(): DOMException {
  return new DOMException("the scheduler stopped", "AbortError");
}

/**
 * Runs the tasks of one session: durable reservation, phases off the commit
 * line, waiting on tasks (a wait that closes a cycle faults), abort,
 * `completing`, recovery. One scheduler per session at a time; `start()`
 * assumes nothing else runs the session's tasks (storage adapters take a
 * single-owner lock).
 */
export class Scheduler {
  private readonly definitions: ReadonlyMap<string, AnyTaskDefinition>;
  private readonly concurrency: number;
  private readonly onError: (error: unknown, taskId: TaskId | undefined) => void;
  private index = new TaskIndex();
  private phase: "stopped" | "starting" | "started" | "stopping" = "stopped";
  /** Counts starts and stops: a start that a stop overtook while it loaded sees it changed. */
  private epoch = 0;
  private unsubscribe: (() => void) | undefined;
  private readonly runs = new Map<number, Run>();
  private readonly inFlight = new Set<number>();
  private readonly recheck = new Set<number>();
  /** Tasks to evaluate again once a transition of another task (the key) is done. */
  private readonly checkAfter = new Map<number, Set<number>>();
  private readonly toCheck = new Set<number>();
  private readonly runnable = new Set<number>();
  private reserving = 0;
  private readonly stuck = new Map<number, string>();
  private readonly marks = new AbortMarks();
  private readonly work = new Set<Promise<unknown>>();
  private readonly waits = new TerminalWaiters();
  /** Seq of the commit that stored each live `waiting` state (0: loaded at start). */
  private readonly waitSeq = new Map<number, number>();
  /** Waiting states not yet checked for closing a wait cycle. */
  private readonly newWaits = new Set<number>();
  private readonly stamp: Stamp;
  private readonly idle = new IdleWaiters();
  private pumpQueued = false;
  private failure: Error | undefined;
  private readonly context: RunContext;
  private readonly stopGraceMs: number;
  private stopping: Promise<SchedulerStopReport> | undefined;
  private readonly abortGrace: AbortGrace;

  constructor(
    readonly session: Session,
    definitions: readonly AnyTaskDefinition[],
    options: SchedulerOptions = {},
  ) {
    const checked = checkSchedulerOptions(definitions, options);
    this.definitions = checked.definitions;
    this.concurrency = checked.concurrency;
    this.stopGraceMs = checked.stopGraceMs;
    this.onError = checked.onError;
    const grace = checked.stopGraceMs;
    // A phase that ignores its aborted signal past the grace is given up on; the abort goes on.
    this.abortGrace = new AbortGrace(
      grace,
      (id, run) => this.runs.get(id) === run,
      (id) =>
        this.onError(
          new TaskStateError(
            `task ${id} did not return within ${grace} ms after abort was requested; the scheduler gave up on its phase (its runtime is revoked) and goes on with the abort`,
          ),
          id,
        ),
    );
    this.stamp = (taskId, what) => readClock(session, `task ${taskId} ${what}`);
    const host: RuntimeHost = {
      session,
      hasLiveChildren: (id) => this.index.hasLiveChildren(id),
      awaitTask: (caller, id, signal) => this.awaitTask(caller, id, signal),
      stamp: this.stamp,
    };
    this.context = {
      host,
      stamp: this.stamp,
      stopping: () => this.phase !== "started" || this.failure !== undefined,
      abortRequested: (id) => this.index.aborting(id),
      onError: (error, id) => this.onError(error, id),
      hold: (id, reason) => this.stuck.set(id, reason),
    };
    // No terminal commit can be stored after a failure: every wait rejects with it at once.
    session.onFailure((failure) => this.failSessionWide(failure));
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
    const epoch = ++this.epoch;
    this.failure = undefined;
    this.index = new TaskIndex();
    this.stuck.clear();
    this.marks.clear();
    this.waitSeq.clear();
    this.newWaits.clear();
    const early: CommitEvent[] = [];
    let buffering = true;
    try {
      // Subscribe first, replay after the load: the last event of a task is its newest stored state.
      this.unsubscribe = this.session.subscribeCommits((event) =>
        buffering ? early.push(event) : this.onCommit(event),
      );
      await this.session.commit((tx) => recoverIn(tx), options);
      const index = await loadLiveTasks(this.session.read, options);
      // Overtaken by a stop (and maybe a newer start): this load must not replace that one's index.
      if (epoch === this.epoch) this.index = index;
    } catch (error) {
      if (epoch === this.epoch) {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
        withScheduler.delete(this.session);
        this.phase = "stopped";
      }
      throw error;
    }
    if (epoch !== this.epoch)
      throw new TaskStateError("Scheduler.start: the scheduler was stopped while it started");
    buffering = false;
    this.phase = "started";
    for (const task of this.index.values()) {
      this.toCheck.add(task.id);
      if (task.state.status === "waiting") this.noteWait(task.id, 0);
    }
    for (const event of early) this.onCommit(event);
    // Waits that spanned a stop: an end stored meanwhile came with no event.
    this.waits.recheck((id) => this.session.read.task(id));
    this.schedulePump();
  }

  /**
   * Stops taking work, aborts `rt.signal` of every run and waits for the
   * runs to return (phases must honour the signal). Tasks whose phase was cut
   * short stay `running` and return to `pending` at the next start. A call
   * that has not returned `stopGraceMs` after its signal aborted is given up
   * on (its runtime revoked, reported through `onError`); its task is left
   * as stored and named in `notStopped`.
   */
  stop(): Promise<SchedulerStopReport> {
    if (this.phase === "stopped") return Promise.resolve({ notStopped: [] });
    this.stopping ??= this.shutDown().finally(() => (this.stopping = undefined));
    return this.stopping;
  }

  private async shutDown(): Promise<SchedulerStopReport> {
    this.phase = "stopping";
    this.epoch++;
    for (const run of this.runs.values()) run.controller.abort(stopReason());
    const notStopped = await giveUpAfterGrace(this.runs, this.work, this.stopGraceMs, (id) =>
      this.onError(notStoppedError(id, this.stopGraceMs), id),
    );
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    withScheduler.delete(this.session);
    this.runnable.clear();
    this.toCheck.clear();
    this.recheck.clear();
    this.checkAfter.clear();
    this.phase = "stopped";
    this.idle.rejectAll(new TaskStateError("the scheduler stopped"));
    return { notStopped };
  }

  // ---- public operations --------------------------------------------------

  /**
   * Requests abort (durably: `abortRequested`) for the task and every live
   * task it owns, at all depths, in one commit (`abortTree`): once this
   * resolves each of their running phases has seen `rt.signal` abort. Owned
   * tasks end first; then the definition's `abort` handler runs and the task
   * ends `aborted`. A `completing` task keeps its outcome (only its owned
   * tasks are aborted). A task this process has no code for ends `orphaned`
   * once it owns no live task, running none of its code. Resolves false when
   * the task is already terminal.
   */
  async abortTask(id: TaskId, options?: CallOptions): Promise<boolean> {
    return abortTree(this.session, id, this.definitions, this.stamp, options);
  }

  /**
   * Resolves with the task's record once it is terminal. Rejects with the
   * session's `SessionFailed` (the storage error its cause) as soon as the
   * session fails: nothing could end the task after that.
   */
  waitForTask(id: TaskId, options?: CallOptions): Promise<TaskRecord> {
    const failed = this.session.failed;
    if (failed) return Promise.reject(failed);
    return this.waits.wait(id, () => this.session.read.task(id), options?.signal);
  }

  /** `rt.waitForTask`: a phase of `caller` awaits `id`, refused when `id` waits on `caller`. */
  private awaitTask(
    caller: TaskId,
    id: TaskId,
    signal: AbortSignal | undefined,
  ): Promise<TaskRecord> {
    const refused = refusedAwait(this.index, (t) => this.waits.awaitsOf(t), caller, id);
    if (refused) return Promise.reject(refused);
    return this.waits.wait(id, () => this.session.read.task(id), signal, caller);
  }

  /** Every task that is not terminal: whether it is active here, why it is blocked, what it waits on. */
  inspect(): SchedulerInspection {
    return inspectScheduler({
      started: this.phase === "started",
      index: this.index,
      definitions: this.definitions,
      running: this.runs.size,
      awaitsOf: (id) => this.waits.awaitsOf(id),
      active: (id) => this.runs.has(id) || this.inFlight.has(id),
      blockedReason: (task) => this.blockedReason(task),
    });
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
    const waiting = this.idle.wait(options?.signal);
    this.schedulePump();
    return waiting;
  }

  // ---- events -------------------------------------------------------------

  private onCommit(event: CommitEvent): void {
    let touched = false;
    for (const write of event.writes) {
      if (write.type !== "task") continue;
      touched = true;
      const task = write.value;
      const previous = this.index.get(task.id);
      const before = previous?.state;
      for (const id of this.index.observe(task)) this.toCheck.add(id);
      if (task.state.status === "waiting") {
        const same = before?.status === "waiting" && jsonEqual(before.on, task.state.on);
        if (!same) this.noteWait(task.id, event.seq);
      } else {
        this.waitSeq.delete(task.id);
        this.newWaits.delete(task.id);
      }
      if (task.state.status === "terminal") {
        this.runnable.delete(task.id);
        this.waits.resolveTerminal(task);
      }
      if (task.abortRequested) this.abortRun(task.id);
      // Owned tasks' runs abort with the commit that makes their owner propagate abort, not when the
      // scheduler's marks reach them (a run that starts later checks `index.aborting` itself).
      if (propagatesAbort(task) && !(previous && propagatesAbort(previous)))
        for (const owned of this.index.liveOwnedTree(task.id)) this.abortRun(owned);
    }
    if (touched) this.schedulePump();
  }

  /** Aborts the signal of the task's run, if it has one that has not seen its abort yet. */
  private abortRun(id: number): void {
    const run = this.runs.get(id);
    if (!run || run.abortSeen) return;
    run.abortSeen = true;
    if (run.inAbortHandler) return;
    run.controller.abort(new DOMException(`abort requested for task ${id}`, "AbortError"));
    this.abortGrace.arm(id, run);
  }

  private noteWait(id: number, seq: number): void {
    this.waitSeq.set(id, seq);
    this.newWaits.add(id);
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
    )
      this.idle.resolveAll();
  }

  private blockedReason(task: TaskRecord): string | undefined {
    const stuck = this.stuck.get(task.id);
    if (stuck !== undefined) return stuck;
    const missing = missingCode(task, this.definitions);
    if (missing !== undefined) return missing;
    if (task.state.status === "running" && !this.runs.has(task.id) && !this.inFlight.has(task.id))
      return "running, but not run by this scheduler (it returns to pending at the next start)";
    return undefined;
  }

  /** Whether a pending task's definition lets it run now (`ready`); one whose `ready` throws is held. */
  private isReady(task: TaskRecord): boolean {
    const ready = this.definitions.get(task.kind)?.ready;
    if (!ready) return true;
    try {
      return ready(task) !== false;
    } catch (error) {
      const info = errorInfo(error);
      this.stuck.set(task.id, `its definition's ready() threw: ${info.name}: ${info.message}`);
      this.onError(error, task.id);
      return false;
    }
  }

  /** Decides what a task needs next, from the index; the commit it starts re-checks everything. */
  private evaluate(id: number): void {
    const task = this.index.get(id);
    if (!task) return;
    if (this.inFlight.has(id)) {
      this.recheck.add(id);
      return;
    }
    if (this.marks.due(task, this.index)) this.markChildren(id as TaskId);
    else this.evaluateOwn(id, task);
  }

  /** Marks an aborting owner's live owned tasks (`AbortMarks`), looking at it again while more are due. */
  private markChildren(id: TaskId): void {
    void this.transition(
      id,
      this.marks.body(id),
      (marked) => {
        if (this.marks.again(id, marked)) this.recheck.add(id);
      },
      (error) => {
        const retried = this.marks.retried(id, error);
        if (retried) this.recheck.add(id);
        else for (const owned of this.index.liveOwnedTree(id)) this.toCheck.add(owned); // each marks itself
        return retried;
      },
    );
  }

  /** What a task needs next once nothing is left for it to mark. */
  private evaluateOwn(id: number, task: TaskRecord): void {
    // A held task still passes its abort on (above), but nothing else moves it; a run moves its own.
    if (this.stuck.has(id) || this.runs.has(id)) return;
    if (this.marks.ownMarkDue(task, this.index)) {
      // Aborting for an owner up its chain whose marking commit failed: it stores its own mark, so
      // that a task that is not ready or still waiting aborts too (`markAbortIn`).
      void this.transition(id as TaskId, (tx) => markAbortIn(tx, id as TaskId));
      return;
    }
    const drained = !this.index.hasLiveChildren(id);
    if (
      task.abortRequested &&
      drained &&
      task.state.status !== "completing" &&
      missingCode(task, this.definitions) !== undefined
    ) {
      // Aborted, owned work done, and no code here to run its handler: it ends orphaned.
      void this.transition(id as TaskId, (tx) =>
        orphanIn(tx, id as TaskId, this.definitions, this.stamp),
      );
      return;
    }
    if (this.blockedReason(task) !== undefined) return;
    switch (task.state.status) {
      case "pending":
        if (task.abortRequested ? drained : this.isReady(task)) this.runnable.add(id);
        break;
      case "waiting":
        if (this.newWaits.has(id) && this.faultCycleClosedBy(task)) break;
        if (task.abortRequested ? drained : this.index.maybeSettled(task)) this.runnable.add(id);
        break;
      case "completing":
        if (drained) {
          const definition = this.definitions.get(task.kind) as AnyTaskDefinition;
          void this.transition(id as TaskId, (tx) =>
            finalizeIn(tx, id as TaskId, definition, this.stamp),
          );
        }
        break;
      default:
        break;
    }
  }

  /**
   * Checks a new `waiting` state for a wait cycle (the index suspects, the
   * commit decides). If it closes one, the wait on the cycle stored last
   * (usually this one) is faulted, which breaks it; one being aborted (an
   * owner's abort not yet marked on it included) aborts instead. Returns
   * whether a cycle was found.
   */
  private faultCycleClosedBy(task: TaskRecord): boolean {
    this.newWaits.delete(task.id);
    if (this.index.aborting(task.id) || task.state.status !== "waiting") return false;
    const awaitsOf = (id: number): readonly number[] => this.waits.awaitsOf(id);
    const first = newWaitEdges(
      task.id,
      task.state.on,
      "waits on",
      (to) => this.index.get(to)?.owner,
    );
    const cycle = cycleInIndex(this.index, awaitsOf, task.id, first);
    if (!cycle) return false;
    const closer = closerOf(cycle, task.id, (id) => this.waitSeq.get(id) ?? 0);
    const record = this.index.get(closer);
    const definition = record && this.definitions.get(record.kind);
    if (!record || !definition || this.blockedReason(record) !== undefined) return true;
    if (this.inFlight.has(closer)) {
      // One transition per task at a time: look again once that one is done.
      this.newWaits.add(task.id);
      let after = this.checkAfter.get(closer);
      if (!after) this.checkAfter.set(closer, (after = new Set()));
      after.add(task.id);
      return true;
    }
    void this.transition(closer as TaskId, (tx) =>
      faultWaitCycleIn(tx, closer as TaskId, definition, awaitsOf, this.stamp),
    );
    return true;
  }

  /**
   * Runs one scheduler commit for a task, at most one at a time per task.
   * `after` gets the commit's value; `failed` is told when it failed, and
   * returns true when it has dealt with the failure (the task is not held).
   */
  private transition<T>(
    id: TaskId,
    body: (tx: Transaction) => Promise<T>,
    after?: (value: T) => void,
    failed?: (error: unknown) => boolean,
  ): Promise<void> {
    this.inFlight.add(id);
    const done = this.session
      .commit(body)
      .then(
        (value) => after?.(value),
        (error: unknown) => {
          if (failed?.(error) !== true) this.transitionFailed(id, error);
        },
      )
      .finally(() => {
        this.inFlight.delete(id);
        if (this.recheck.delete(id)) this.toCheck.add(id);
        for (const other of this.checkAfter.get(id) ?? []) this.toCheck.add(other);
        this.checkAfter.delete(id);
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
    this.idle.rejectAll(this.failure);
    this.waits.rejectAll(this.failure);
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
      (tx) => reserveIn(tx, id, this.definitions, this.stamp),
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
      driveTask(this.context, run, definition, record)
        .catch((error: unknown) => {
          if (error instanceof SessionFailed || this.session.failed)
            this.failSessionWide(this.session.failed ?? error);
          else this.onError(error, record.id);
        })
        .finally(() => {
          this.abortGrace.clear(record.id);
          this.runs.delete(record.id);
          this.waits.forgetCaller(record.id);
          this.toCheck.add(record.id);
          this.schedulePump();
        }),
    );
  }
}
