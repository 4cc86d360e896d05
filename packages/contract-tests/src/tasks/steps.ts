import {
  Scheduler,
  Session,
  type AnyTaskDefinition,
  type Json,
  type Storage,
  type TaskId,
  type TaskRecord,
  type TaskStatus,
  type TaskToken,
} from "@durably/core";
import type { Check } from "../storage/support.js";
import { ROOT, Spawner } from "./definitions.js";

// The steps the task scenarios are made of: create, read back, wait for a
// state, restart, shut down; and the terminal states they expect.

export function createTask<I extends Json>(
  session: Session,
  definition: TaskToken<I>,
  input: I,
): Promise<TaskId> {
  return session.commit((tx) =>
    tx.createTask(definition, input, { ownership: { kind: "ownerless" }, conversationId: ROOT }),
  );
}

export async function stored(session: Session, id: TaskId): Promise<TaskRecord> {
  const task = await session.read.task(id);
  if (!task) throw new Error(`task ${id} is not stored`);
  return task;
}

export async function entryKinds(session: Session): Promise<string[]> {
  const page = await session.read.scanEntries({ conversationId: ROOT, order: "ascending" }, 1000);
  return page.items.map((e) => e.kind);
}

export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The owned tasks of `owner`, ascending. */
export async function ownedBy(session: Session, owner: TaskId): Promise<TaskRecord[]> {
  return (await session.read.scanTasks({ owner, order: "ascending" }, 100)).items;
}

/**
 * The task's terminal record, or a failure naming the task and how it was
 * left when `timeoutMs` passed (a task that never ends must fail the
 * scenario, not hang the suite).
 */
export async function terminalWithin(
  scheduler: Scheduler,
  session: Session,
  id: TaskId,
  what: string,
  timeoutMs = 5_000,
): Promise<TaskRecord> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    return await scheduler.waitForTask(id, { signal });
  } catch (error) {
    if (!signal.aborted) throw error;
    const task = await session.read.task(id);
    throw new Error(
      `${what}: task ${id} did not end within ${timeoutMs} ms; it is ${JSON.stringify(task?.state)} (abortRequested ${String(task?.abortRequested)})`,
      { cause: error },
    );
  }
}

/** Checks the state task `id` is stored with. */
export async function checkState(
  check: Check,
  session: Session,
  id: TaskId,
  expected: TaskRecord["state"],
  what: string,
): Promise<void> {
  check.equal((await stored(session, id)).state, expected, what);
}

/** Waits until task `id` is stored with `status`. */
export function untilStatus(
  session: Session,
  id: TaskId,
  status: TaskStatus,
  what = `task ${id} is ${status}`,
): Promise<void> {
  return until(what, async () => (await stored(session, id)).state.status === status);
}

/** Waits until `owner` has created its one owned task, and returns that task's id. */
export async function spawnedChild(session: Session, owner: TaskId): Promise<TaskId> {
  await until(`owner ${owner} spawned its child`, async () => {
    return (await ownedBy(session, owner)).length === 1;
  });
  return (await ownedBy(session, owner))[0]?.id as TaskId;
}

/**
 * Creates an owner whose phase spawns one Held child per gate and completes
 * at once, and waits until it holds `completing` (its children still live).
 */
export async function completingOwner(session: Session, gates: readonly string[]): Promise<TaskId> {
  const owner = await createTask(session, Spawner, {
    children: gates.map((gate) => ({ kind: "held" as const, gate })),
    then: "complete",
  });
  await untilStatus(session, owner, "completing", `owner ${owner} is completing`);
  return owner;
}

/** The status of every task state the session stores from now on, in commit order. */
export function storedStatuses(session: Session): string[] {
  const statuses: string[] = [];
  session.subscribeCommits((event) => {
    for (const write of event.writes)
      if (write.type === "task") statuses.push(write.value.state.status);
  });
  return statuses;
}

/**
 * Starts a Scheduler over `session` that registers only `definitions` and
 * returns it once idle: a deploy that does not know a stored task's kind, or
 * knows only an older version of it. Stop the scheduler `open` gave first.
 */
export async function idleScheduler(
  session: Session,
  definitions: readonly AnyTaskDefinition[],
): Promise<Scheduler> {
  const scheduler = new Scheduler(session, definitions);
  await scheduler.start();
  await scheduler.waitForIdle();
  return scheduler;
}

/**
 * What a restart gives, once the first scheduler has stopped: a Session over
 * the reopened storage when the adapter can reopen, else the same session
 * (a new scheduler over it recovers the same way).
 */
export async function restarted(
  first: Session,
  reopen: (() => Promise<Storage>) | undefined,
): Promise<Session> {
  if (!reopen) return first;
  await first.close();
  return Session.open(await reopen());
}

/** Stops the scheduler, then closes the session: how every scenario ends. */
export async function shutDown(scheduler: Scheduler, session: Session): Promise<void> {
  await scheduler.stop();
  await session.close();
}

/** The terminal state of a task that completed with `value`. */
export function completed(value: Json): TaskRecord["state"] {
  return { status: "terminal", outcome: { kind: "completed", value } };
}

/** The terminal state of a task aborted with `reason` (its abort handler's). */
export function aborted(reason: string): TaskRecord["state"] {
  return { status: "terminal", outcome: { kind: "aborted", reason } };
}

/** The terminal state of a task ended without running its code, for `reason`. */
export function orphaned(reason: string): TaskRecord["state"] {
  return { status: "terminal", outcome: { kind: "orphaned", reason } };
}
