import type { ConversationId, TaskId } from "../domain/ids.js";
import type { TaskRecord, TaskStatus } from "../domain/records.js";
import type { AnyTaskDefinition } from "./define-task.js";
import type { TaskIndex } from "./task-index.js";

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
  /**
   * The live tasks it waits for before it can move on, ascending: its live
   * owned tasks when it is abort-marked or `completing`, else the live tasks
   * of its `waiting` state; plus those its phase awaits with
   * `rt.waitForTask`. Absent when none.
   */
  readonly waitingOn?: readonly TaskId[];
  /** A pending task its definition's `ready` holds back: it waits for a decision from outside. */
  readonly notReady?: true;
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

/** How one live task looks to `inspect()`, from the scheduler's index. */
export function inspectTask(
  task: TaskRecord,
  index: TaskIndex,
  awaits: readonly number[],
  active: boolean,
  blocked: string | undefined,
  notReady = false,
): TaskInspection {
  const waitingOn = new Set<number>(awaits);
  const state = task.state;
  if (task.abortRequested || state.status === "completing")
    for (const child of index.liveChildIds(task.id)) waitingOn.add(child);
  else if (state.status === "waiting")
    for (const on of state.on) if (index.get(on)) waitingOn.add(on);
  return {
    id: task.id,
    kind: task.kind,
    version: task.version,
    conversationId: task.conversationId,
    owner: task.owner,
    status: state.status,
    abortRequested: task.abortRequested,
    active,
    ...(blocked !== undefined ? { blocked } : {}),
    ...(notReady ? { notReady: true as const } : {}),
    ...(waitingOn.size > 0
      ? { waitingOn: ([...waitingOn] as TaskId[]).sort((a, b) => a - b) }
      : {}),
  };
}

/** For `inspect()`: a pending task its definition's `ready` holds back (no side effects). */
export function heldBack(
  task: TaskRecord,
  definitions: ReadonlyMap<string, AnyTaskDefinition>,
): boolean {
  if (task.state.status !== "pending" || task.abortRequested) return false;
  try {
    return definitions.get(task.kind)?.ready?.(task) === false;
  } catch {
    return false; // reported as blocked instead
  }
}

/** What `inspect()` reads from the scheduler. */
export interface InspectionSource {
  readonly started: boolean;
  readonly index: TaskIndex;
  readonly definitions: ReadonlyMap<string, AnyTaskDefinition>;
  readonly running: number;
  awaitsOf(id: number): readonly number[];
  active(id: number): boolean;
  blockedReason(task: TaskRecord): string | undefined;
}

/** `scheduler.inspect()`: every live task, by id, and the blocked ones. */
export function inspectScheduler(source: InspectionSource): SchedulerInspection {
  const tasks = [...source.index.values()].map((task) =>
    inspectTask(
      task,
      source.index,
      source.awaitsOf(task.id),
      source.active(task.id),
      source.blockedReason(task),
      heldBack(task, source.definitions),
    ),
  );
  tasks.sort((a, b) => a.id - b.id);
  return {
    started: source.started,
    tasks,
    blocked: tasks.filter((t) => t.blocked !== undefined),
    running: source.running,
  };
}
