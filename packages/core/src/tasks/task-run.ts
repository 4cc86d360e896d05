import { SessionFailed, TaskFaulted } from "../domain/errors.js";
import type { TaskId } from "../domain/ids.js";
import { jsonEqual, type Json } from "../domain/json.js";
import type { TaskOutcome, TaskRecord } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import type { AnyTaskDefinition } from "./define-task.js";
import { errorInfo } from "./error-info.js";
import { CallLatch, GAVE_UP, unlessGivenUp } from "./give-up.js";
import { TaskRuntime, viewOf, type RuntimeHost } from "./runtime.js";
import { finishRunningIn, markAbortIn, parkIn, type Stamp } from "./transitions.js";

/** One reserved task being run by a scheduler. */
export interface Run {
  controller: AbortController;
  /** Abort was requested while this run held the task. */
  abortSeen: boolean;
  inAbortHandler: boolean;
  /** The phase or abort-handler call in progress, which the scheduler may give up on. */
  call?: CallLatch;
}

/** Why a runtime stops working when the scheduler gave up on its call. */
function gaveUpMessage(id: TaskId): string {
  return `the scheduler gave up on this call of task ${id}: it did not return within the grace period after its signal aborted`;
}

/**
 * Runs one phase or abort-handler call with `rt`, which is ended when the
 * call returns or the scheduler gives up on it (then later use of `rt`
 * throws, so an abandoned call can store nothing). Resolves `GAVE_UP` in
 * that case; a later rejection of the abandoned call (other than with its
 * signal's reason) is reported.
 */
async function runCall<T>(
  context: RunContext,
  run: Run,
  rt: TaskRuntime,
  call: () => T | Promise<T>,
): Promise<T | typeof GAVE_UP> {
  const latch = new CallLatch();
  run.call = latch;
  try {
    return await unlessGivenUp(Promise.resolve(call()), latch, (error) => {
      // Its own abort reason, rethrown at last, is no news; anything else is reported.
      if (error !== rt.signal.reason) context.onError(error, rt.taskId);
    });
  } finally {
    run.call = undefined;
    rt.end(latch.givenUp ? gaveUpMessage(rt.taskId) : undefined);
  }
}

/** What running a task needs from its scheduler. */
export interface RunContext {
  readonly host: RuntimeHost;
  readonly stamp: Stamp;
  /** The scheduler stops or failed: leave the task as stored. */
  stopping(): boolean;
  /** The task must abort, as far as stored commits tell: it is marked, or a task up its owner chain propagates abort. */
  abortRequested(id: TaskId): boolean;
  onError(error: unknown, id: TaskId): void;
  /** Holds the task (reported blocked) after a commit ending it failed. */
  hold(id: TaskId, reason: string): void;
}

function abortWanted(context: RunContext, run: Run, id: TaskId): boolean {
  return run.abortSeen || context.abortRequested(id);
}

function fault(error: Error): TaskOutcome {
  return { kind: "faulted", error: errorInfo(error) };
}

/** One reserved task: phases in turn until it waits, finishes, faults or is aborted. */
export async function driveTask(
  context: RunContext,
  run: Run,
  definition: AnyTaskDefinition,
  reserved: TaskRecord,
): Promise<void> {
  const id = reserved.id;
  let task = reserved;
  for (;;) {
    if (context.stopping()) return;
    if (abortWanted(context, run, id)) return runAbort(context, run, definition, task);
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
      return endTask(context, definition, id, fault(error));
    }
    const before = task.state;
    const rt = new TaskRuntime(context.host, definition, task, run.controller.signal);
    let thrown: { error: unknown } | undefined;
    let gaveUp = false;
    try {
      // Types were erased at registration; the definition checked the checkpoint it receives.
      gaveUp =
        (await runCall(context, run, rt, () =>
          phase(viewOf<never, never>(task), rt as TaskRuntime<never, never>),
        )) === GAVE_UP;
    } catch (error) {
      thrown = { error };
    }
    if (context.stopping()) return;
    task = rt.latest;
    if (task.state.status !== "running") {
      if (thrown) context.onError(thrown.error, id); // it finished first; the error has nowhere to go
      return;
    }
    if (abortWanted(context, run, id)) continue;
    if (gaveUp) return; // only a stop or an abort gives up on a phase
    if (thrown)
      return endTask(context, definition, id, { kind: "faulted", error: errorInfo(thrown.error) });
    if (jsonEqual(task.state, before)) {
      const error = new TaskFaulted(
        `task ${id} ("${task.kind}"): phase "${name}" returned without committing a new checkpoint or state`,
      );
      return endTask(context, definition, id, fault(error));
    }
  }
}

async function runAbort(
  context: RunContext,
  run: Run,
  definition: AnyTaskDefinition,
  task: TaskRecord,
): Promise<void> {
  const id = task.id;
  const { session } = context.host;
  if (!task.abortRequested) {
    // Aborting for an owner up its chain: the mark is stored first, so the
    // handler, a park and the end all see a marked task (as after `abortTask`).
    const marked = await commitOrHold(
      context,
      id,
      (tx) => markAbortIn(tx, id),
      "storing its abort mark",
    );
    if (!marked || marked.state.status !== "running" || context.stopping()) return;
    task = marked;
  }
  if (context.host.hasLiveChildren(id)) {
    // Owned work drains first; give the slot back meanwhile (the pump reserves it again).
    await session.commit((tx) => parkIn(tx, id));
    return;
  }
  run.inAbortHandler = true;
  run.controller = new AbortController(); // the handler's signal aborts only when the scheduler stops
  const rt = new TaskRuntime(context.host, definition, task, run.controller.signal);
  let outcome: TaskOutcome;
  try {
    const reason = await runCall(context, run, rt, () =>
      definition.abort(viewOf<never, never>(task), rt as TaskRuntime<never, never>),
    );
    if (reason === GAVE_UP) return; // only a stop gives up on an abort handler
    outcome = typeof reason === "string" ? { kind: "aborted", reason } : { kind: "aborted" };
  } catch (error) {
    outcome = { kind: "faulted", error: errorInfo(error) };
  }
  if (context.stopping()) return;
  if (rt.latest.state.status !== "running") return; // the handler finished the task itself
  await endTask(context, definition, id, outcome);
}

/** The scheduler's own end of a task it runs (a fault, an abort outcome). */
async function endTask(
  context: RunContext,
  definition: AnyTaskDefinition,
  id: TaskId,
  outcome: TaskOutcome,
): Promise<void> {
  await commitOrHold(
    context,
    id,
    (tx) => finishRunningIn(tx, id, definition, outcome, context.stamp),
    "ending the task",
  );
}

/**
 * One of the scheduler's commits for a task it runs. A failure that is not
 * the session's holds the task (reported blocked, `what` failed) and
 * resolves `undefined`: retrying would fail the same way.
 */
async function commitOrHold<T>(
  context: RunContext,
  id: TaskId,
  body: (tx: Transaction) => Promise<T>,
  what: string,
): Promise<T | undefined> {
  const { session } = context.host;
  try {
    return await session.commit(body);
  } catch (error) {
    if (error instanceof SessionFailed || session.failed) throw error;
    const info = errorInfo(error);
    context.hold(id, `${what} failed: ${info.name}: ${info.message}`);
    context.onError(error, id);
    return undefined;
  }
}
