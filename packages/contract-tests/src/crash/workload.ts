import { defineDoc, Session } from "@durably/core";
import type {
  ConversationId,
  EntryRecord,
  Json,
  Storage,
  TaskId,
  TaskRecord,
  TaskToken,
} from "@durably/core";
import type { CommitterIds } from "./protocol.js";

/**
 * The commits the crash suite makes. Each step commit of committer `c` writes
 * three things together, each naming `(c, step)` so they can be
 * cross-checked after a crash: an entry in c's conversation, c's counter
 * document, and c's task record (replaced whole).
 */

export const STEP_ENTRY_KIND = "durably.crash.step";
export const TASK_KIND = "durably.crash.committer";

/** What a step writes into all three places. */
export type StepMark = {
  committer: number;
  step: number;
  /** Id of the step's entry; 0 before the first step. */
  entryId: number;
};

export const CounterDoc = defineDoc<StepMark>({
  kind: "durably.crash.counter",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ committer: -1, step: 0, entryId: 0 }),
});

/** The committers' task type: its checkpoint starts at step 0. */
export const CommitterTask: TaskToken<{ committer: number }, StepMark> = {
  name: TASK_KIND,
  version: 1,
  initial: ({ committer }) => ({ committer, step: 0, entryId: 0 }),
};

export function stepOfEntry(entry: EntryRecord): { committer: number; step: number } | undefined {
  const data = entry.data;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const { committer, step } = data;
  if (typeof committer !== "number" || typeof step !== "number") return undefined;
  return { committer, step };
}

export function isStepMark(value: Json | undefined): value is Json & StepMark {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return (
    typeof value.committer === "number" &&
    typeof value.step === "number" &&
    typeof value.entryId === "number"
  );
}

/** The task's checkpoint, where a step leaves its mark. */
export function taskMark(task: TaskRecord): Json | undefined {
  return "checkpoint" in task.state ? task.state.checkpoint : undefined;
}

/** One commit creating every committer's conversation and task (its checkpoint at step 0). */
export async function setUpCommitters(storage: Storage, count: number): Promise<CommitterIds[]> {
  const session = await Session.open(storage);
  try {
    return await session.commit(async (tx) => {
      const out: CommitterIds[] = [];
      for (let committer = 0; committer < count; committer++) {
        const conversation = await tx.createConversation({ ownership: { kind: "ownerless" } });
        const taskId = await tx.createTask(
          CommitterTask,
          { committer },
          { ownership: { kind: "ownerless" }, conversationId: conversation.id },
        );
        out.push({ conversationId: conversation.id, taskId });
      }
      return out;
    });
  } finally {
    await session.close();
  }
}

/** Commits `step` for `committer`; resolves with the step's entry id once the commit is acknowledged. */
export async function commitStep(
  session: Session,
  ids: CommitterIds,
  committer: number,
  step: number,
): Promise<number> {
  return session.commit(async (tx) => {
    // Table reads come before the first table write (ReadAfterWrite).
    const task = await tx.task(ids.taskId as TaskId);
    if (task === undefined)
      throw new Error(`crash workload: task ${ids.taskId} of committer ${committer} is missing`);
    const entry = await tx.appendEntry(ids.conversationId as ConversationId, {
      kind: STEP_ENTRY_KIND,
      data: { committer, step },
    });
    const mark: StepMark = { committer, step, entryId: entry.id };
    const counter = await tx.doc(CounterDoc, ids.conversationId as ConversationId);
    counter.committer = committer;
    counter.step = step;
    counter.entryId = entry.id;
    // Status stays "pending": the task is only a record carrying the mark, nothing runs it.
    await tx.putTask({ ...task, state: { status: "pending", checkpoint: { ...mark } } });
    return entry.id;
  });
}

/** The next step each committer should write: one past what the session reads back. */
export async function nextSteps(
  session: Session,
  committers: readonly CommitterIds[],
): Promise<number[]> {
  const out: number[] = [];
  for (const ids of committers) {
    const value = await session.snapshot(CounterDoc, ids.conversationId);
    out.push((isStepMark(value) ? value.step : 0) + 1);
  }
  return out;
}
