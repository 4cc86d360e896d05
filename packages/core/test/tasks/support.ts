import {
  ROOT_CONVERSATION_ID,
  Scheduler,
  Session,
  type AnyTaskDefinition,
  type Json,
  type SchedulerOptions,
  type SessionOptions,
  type TaskDefinition,
  type TaskId,
  type TaskRecord,
  type Transaction,
  defineTask,
} from "../../src/index.js";
import { FaultyStorage, Survivor } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";

export const ROOT = ROOT_CONVERSATION_ID;

/** A storage whose close leaves the memory behind, so a new Session can "reopen" it (a restart). */
export interface TaskWorld {
  session: Session;
  scheduler: Scheduler;
  storage: FaultyStorage;
  errors: unknown[];
  /** Abandons the session without stopping anything (as a killed process would) and opens a new one over the same data. */
  restart(definitions?: readonly AnyTaskDefinition[]): Promise<TaskWorld>;
  close(): Promise<void>;
}

export async function openTasks(
  definitions: readonly AnyTaskDefinition[],
  options: { session?: SessionOptions; scheduler?: SchedulerOptions; start?: boolean } = {},
  memory = new MemoryStorage(),
): Promise<TaskWorld> {
  const storage = new Survivor(memory);
  const session = await Session.open(storage, options.session);
  const errors: unknown[] = [];
  const scheduler = new Scheduler(session, definitions, {
    onError: (error) => errors.push(error),
    ...options.scheduler,
  });
  if (options.start !== false) await scheduler.start();
  return {
    session,
    scheduler,
    storage,
    errors,
    restart: (next = definitions) => openTasks(next, { ...options, start: true }, memory),
    close: async () => {
      await scheduler.stop();
      await session.close();
    },
  };
}

/** Creates an ownerless task in the root conversation; resolves with its id once stored. */
export function create<I extends Json>(
  session: Session,
  definition: TaskDefinition<I, never> | AnyTaskDefinition,
  input: I,
  options: { background?: boolean } = {},
): Promise<TaskId> {
  return session.commit((tx) =>
    tx.createTask(definition, input, {
      ownership: { kind: "ownerless" },
      conversationId: ROOT,
      ...options,
    }),
  );
}

export async function taskOf(session: Session, id: TaskId): Promise<TaskRecord> {
  const task = await session.read.task(id);
  if (!task) throw new Error(`task ${id} is not stored`);
  return task;
}

export function outcomeOf(task: TaskRecord): unknown {
  return task.state.status === "terminal" || task.state.status === "completing"
    ? task.state.outcome
    : undefined;
}

export async function entryKinds(session: Session): Promise<string[]> {
  const page = await session.read.scanEntries({ conversationId: ROOT, order: "ascending" }, 1000);
  return page.items.map((e) => e.kind);
}

/** A promise plus its resolver, to hold a phase at a point the test controls. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

export type { Transaction };

/** Never runs a phase: its `ready()` throws, so the scheduler holds it (reported blocked, `HELD`). */
export const HeldOwner = defineTask({
  name: "t.held-owner",
  version: 1,
  initial: () => ({ phase: "run" }),
  ready: () => {
    throw new RangeError("no verdict");
  },
  phases: {
    run: () => {
      throw new Error("never run: the task is held");
    },
  },
  abort: () => "owner aborted",
});
export const HELD = "its definition's ready() threw: RangeError: no verdict";

/** The tasks `inspect()` reports blocked, with why. */
export function blocked(w: TaskWorld): [number, string | undefined][] {
  return w.scheduler.inspect().blocked.map((t) => [t.id, t.blocked]);
}

/** Polls `check` every 2 ms until it holds; throws naming `what` after about 4 s. */
export async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** The (first) task `owner` owns. */
export async function ownedTask(w: TaskWorld, owner: TaskId): Promise<TaskId> {
  const [task] = (await w.session.read.scanTasks({ owner }, 10)).items;
  if (!task) throw new Error(`task ${owner} owns no task`);
  return task.id;
}
