import type { ConversationId, TaskId } from "../domain/ids.js";
import type { Json, JsonObject } from "../domain/json.js";
import type { ErrorInfo, TaskRecord, WaitPolicy } from "../domain/records.js";
import type { TaskToken } from "../session/tokens.js";
import type { Transaction } from "../session/transaction.js";
import type { TaskRuntime } from "./runtime.js";
import { checkKeys } from "../domain/option-keys.js";

/** A task checkpoint: a JSON object naming the phase to run next. */
export type TaskCheckpoint = JsonObject & { phase: string };

/** What a phase (or the abort handler) sees of its task: the stored record, typed. */
export interface TaskView<Input extends Json = Json, C extends TaskCheckpoint = TaskCheckpoint> {
  readonly id: TaskId;
  readonly conversationId: ConversationId;
  readonly kind: string;
  readonly version: number;
  readonly input: Input;
  /** The checkpoint of the current state (the phase's own, for a phase). */
  readonly checkpoint: C;
  readonly abortRequested: boolean;
  readonly owner: TaskId | undefined;
  readonly memos: Readonly<JsonObject>;
  /** The whole stored record. */
  readonly record: TaskRecord;
}

/** Outcomes a task's own code may commit; `faulted` and `orphaned` are the scheduler's. */
export type TaskResult =
  | { kind: "completed"; value?: Json }
  | { kind: "failed"; error: ErrorInfo }
  | { kind: "aborted"; reason?: string };

/**
 * What an `rt.commit` callback returns: a checkpoint (shorthand for
 * `{ status: "running", checkpoint }`), a whole next state, or `undefined`
 * to leave the task's state as it is (the commit still stores its other writes).
 * A checkpoint has `phase` and no `status`; a state has `status` and no `phase`.
 */
export type TaskNext<C extends TaskCheckpoint = TaskCheckpoint> =
  | C
  | { status: "running"; checkpoint: C }
  | { status: "waiting"; checkpoint: C; on: readonly TaskId[]; policy: WaitPolicy }
  | { status: "terminal" | "completing"; outcome: TaskResult }
  | undefined;

export type TaskPhase<Input extends Json, C extends TaskCheckpoint> = (
  task: TaskView<Input, C>,
  rt: TaskRuntime<Input, C>,
) => Promise<void> | void;

/** Runs after abort was requested and the task's owned tasks are terminal; a returned string is the outcome's reason. */
export type TaskAbortHandler<Input extends Json, C extends TaskCheckpoint> = (
  task: TaskView<Input, C>,
  rt: TaskRuntime<Input, C>,
) => Promise<string | void> | string | void;

export interface TaskDefinitionOptions<Input extends Json, C extends TaskCheckpoint> {
  /** Stable kind stored on every task, e.g. "app.charge". */
  name: string;
  /** Positive integer; raise it (with `migrate`) when the checkpoint shape changes. */
  version: number;
  /** The checkpoint of a new task (its `phase` must name one of `phases`). */
  initial: (input: Input) => C;
  /** Phase functions by name; each runs off the commit line and must commit a new state. */
  phases: { readonly [phase: string]: TaskPhase<Input, C> };
  abort: TaskAbortHandler<Input, C>;
  /** Turns a checkpoint stored by an older version into this version's shape (run at reservation). */
  migrate?: (checkpoint: Json, fromVersion: number) => C;
  /**
   * Table reads `onTerminal` needs. Table reads must come before a commit's
   * first table write, and by the time `onTerminal` runs the task is written;
   * so this runs earlier in the same commit, before anything is written, and
   * what it returns is `onTerminal`'s third argument. In a phase's
   * `rt.commit` it runs before the callback (whether or not the callback
   * finishes the task), with the task as it was before the commit. Read only:
   * a write here would make the callback's own reads throw `ReadAfterWrite`.
   */
  beforeTerminal?: (tx: Transaction, task: TaskRecord) => unknown;
  /**
   * Runs inside the commit that makes a task of this kind terminal, whoever
   * makes it terminal (its phase, a fault, an abort, the end of `completing`,
   * an abort of a task stored at a newer version, which ends `orphaned`):
   * what it writes is stored atomically with the outcome. The commit has
   * already written the task, so table reads throw `ReadAfterWrite` (read in
   * `beforeTerminal`); writes and documents work.
   */
  onTerminal?: (tx: Transaction, task: TaskRecord, read: unknown) => Promise<void> | void;
  /**
   * Whether a `pending` task may be reserved now (default: always). A task
   * for which it returns false waits for a decision made outside the
   * scheduler (a person's approval, say): it is not reserved, holds no
   * concurrency slot and does not keep `waitForIdle` from resolving. Whoever
   * decides writes the task (`tx.putTask`, e.g. a new checkpoint) so that
   * it returns true; the scheduler asks again after every commit that
   * writes the task. An abort-requested task is reserved regardless (its
   * abort handler runs). Pure: it reads the stored record only.
   */
  ready?: (task: TaskRecord) => boolean;
}

/** A registered-able task definition; also the token `tx.createTask` takes. */
export interface TaskDefinition<
  Input extends Json = Json,
  C extends TaskCheckpoint = TaskCheckpoint,
>
  extends TaskToken<Input, C>, Readonly<Omit<TaskDefinitionOptions<Input, C>, "initial">> {
  readonly initial: (input: Input) => C;
}

/**
 * Any definition with its types erased, for registries (a `Scheduler` takes
 * definitions of different input and checkpoint types side by side).
 */
export interface AnyTaskDefinition {
  readonly name: string;
  readonly version: number;
  readonly initial: (input: never) => TaskCheckpoint;
  readonly phases: { readonly [phase: string]: TaskPhase<never, never> };
  readonly abort: TaskAbortHandler<never, never>;
  readonly migrate?: (checkpoint: Json, fromVersion: number) => TaskCheckpoint;
  readonly beforeTerminal?: (tx: Transaction, task: TaskRecord) => unknown;
  readonly onTerminal?: (tx: Transaction, task: TaskRecord, read: unknown) => Promise<void> | void;
  readonly ready?: (task: TaskRecord) => boolean;
}

/** Checks that a value is a checkpoint of `definition`, naming `where` when it is not. */
export function checkCheckpoint(
  definition: { name: string; phases: object },
  value: unknown,
  where: string,
): asserts value is TaskCheckpoint {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError(`task "${definition.name}": ${where} must be a JSON object with a phase`);
  const phase = (value as { phase?: unknown }).phase;
  if (typeof phase !== "string")
    throw new TypeError(`task "${definition.name}": ${where}.phase must be a string`);
  if (!Object.prototype.hasOwnProperty.call(definition.phases, phase))
    throw new TypeError(
      `task "${definition.name}": ${where}.phase "${phase}" is not one of its phases (${Object.keys(definition.phases).join(", ")})`,
    );
  if ("status" in value)
    throw new TypeError(
      `task "${definition.name}": ${where} has a "status" field; checkpoints must not (it marks a whole state)`,
    );
}

const DEFINITION_FIELDS = [
  "name",
  "version",
  "initial",
  "phases",
  "abort",
  "migrate",
  "beforeTerminal",
  "onTerminal",
  "ready",
];

/**
 * Defines a durable task. The result is the token
 * `tx.createTask` takes and what a `Scheduler` registers.
 */
export function defineTask<Input extends Json, C extends TaskCheckpoint>(
  options: TaskDefinitionOptions<Input, C>,
): TaskDefinition<Input, C> {
  if (typeof options !== "object" || options === null)
    throw new TypeError("defineTask: options must be an object");
  const { name, version, initial, phases, abort, migrate, beforeTerminal, onTerminal, ready } =
    options;
  if (typeof name !== "string" || name === "")
    throw new TypeError("defineTask: name must be a non-empty string");
  // A misspelled hook (`onTerminl`) would otherwise never run.
  checkKeys(options, DEFINITION_FIELDS, `defineTask "${name}"`, {
    what: "a task definition field",
  });
  if (!Number.isSafeInteger(version) || version < 1)
    throw new TypeError(
      `defineTask "${name}": version must be a positive integer, got ${String(version)}`,
    );
  if (typeof initial !== "function")
    throw new TypeError(`defineTask "${name}": initial must be a function`);
  if (
    typeof phases !== "object" ||
    phases === null ||
    Array.isArray(phases) ||
    Object.keys(phases).length === 0
  )
    throw new TypeError(`defineTask "${name}": phases must be an object with at least one phase`);
  for (const [phase, fn] of Object.entries(phases)) {
    if (phase.trim() === "")
      throw new TypeError(`defineTask "${name}": a phase name must not be empty or blank`);
    if (typeof fn !== "function")
      throw new TypeError(`defineTask "${name}": phases.${phase} must be a function`);
  }
  if (typeof abort !== "function")
    throw new TypeError(`defineTask "${name}": abort must be a function`);
  if (migrate !== undefined && typeof migrate !== "function")
    throw new TypeError(`defineTask "${name}": migrate must be a function`);
  if (beforeTerminal !== undefined && typeof beforeTerminal !== "function")
    throw new TypeError(`defineTask "${name}": beforeTerminal must be a function`);
  if (onTerminal !== undefined && typeof onTerminal !== "function")
    throw new TypeError(`defineTask "${name}": onTerminal must be a function`);
  if (ready !== undefined && typeof ready !== "function")
    throw new TypeError(`defineTask "${name}": ready must be a function`);
  const frozenPhases = Object.freeze({ ...phases });
  const definition: TaskDefinition<Input, C> = {
    ...options,
    phases: frozenPhases,
    // Checked here so a bad initial checkpoint fails `tx.createTask`, before anything is stored.
    initial: (input: Input): C => {
      const checkpoint = initial(input);
      checkCheckpoint({ name, phases: frozenPhases }, checkpoint, "initial(input)");
      return checkpoint;
    },
  };
  return Object.freeze(definition);
}
