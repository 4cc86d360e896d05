import {
  defineDoc,
  defineTask,
  ROOT_CONVERSATION_ID,
  type Json,
  type Session,
  type TaskId,
  type TaskToken,
  type TaskRecord,
} from "@durably/core";

export const ROOT = ROOT_CONVERSATION_ID;

/** A task-scope document: retired by the terminal commit. */
export const Scratch = defineDoc<{ notes: string[] }>({
  kind: "conformance.scratch",
  version: 1,
  scope: "task",
  initial: () => ({ notes: [] }),
});

/**
 * intent -> effect -> outcome. The effect phase, unless the input says
 * otherwise, memoises an effect and then sleeps `holdMs` (honouring
 * rt.signal) so a scenario can stop the scheduler there.
 */
export const Steps = defineTask({
  name: "conformance.steps",
  version: 1,
  initial: (input: { label: string; holdMs?: number }) => ({
    phase: "intent",
    label: input.label,
    holdMs: input.holdMs ?? 0,
  }),
  phases: {
    intent: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, { kind: "intent", byTaskId: task.id });
        (await tx.doc(Scratch, task.id)).notes.push("intent");
        return { ...task.checkpoint, phase: "effect" };
      });
    },
    effect: async (task, rt) => {
      await rt.memo("effect", () => `effect of ${task.id}`);
      // A negative hold makes rt.sleep throw: how the scenarios get a phase that throws.
      if (task.checkpoint.holdMs !== 0) await rt.sleep(task.checkpoint.holdMs);
      await rt.commit(() => ({ ...task.checkpoint, phase: "outcome" }));
    },
    outcome: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, { kind: "outcome", byTaskId: task.id });
        return { status: "terminal", outcome: { kind: "completed", value: task.checkpoint.label } };
      });
    },
  },
  abort: () => "aborted on request",
});

/** Finishes at once: completed, or failed when its input says so. */
export const Leaf = defineTask({
  name: "conformance.leaf",
  version: 1,
  initial: (input: { fail: boolean; holdMs?: number }) => ({
    phase: "run",
    fail: input.fail,
    holdMs: input.holdMs ?? 0,
  }),
  phases: {
    run: async (task, rt) => {
      // A negative hold makes rt.sleep throw: how the scenarios get a phase that throws.
      if (task.checkpoint.holdMs !== 0) await rt.sleep(task.checkpoint.holdMs);
      await rt.commit(() =>
        task.checkpoint.fail
          ? {
              status: "terminal",
              outcome: {
                kind: "failed",
                error: { name: "LeafFailed", message: `leaf ${task.id}` },
              },
            }
          : { status: "terminal", outcome: { kind: "completed", value: task.id } },
      );
    },
  },
  abort: (task) => `leaf ${task.id} aborted`,
});

/** Spawns Leaf children, waits on them per its policy, then reports their outcome kinds. */
export const Fanout = defineTask({
  name: "conformance.fanout",
  version: 1,
  initial: (input: { fails: boolean[]; policy: "allSettled" | "failFast"; holdMs?: number }) => ({
    phase: "spawn",
    fails: input.fails,
    policy: input.policy,
    holdMs: input.holdMs ?? 0,
    children: [] as TaskId[],
  }),
  phases: {
    spawn: async (task, rt) => {
      await rt.commit(async (tx) => {
        const children: TaskId[] = [];
        for (const fail of task.checkpoint.fails)
          children.push(
            await tx.createTask(
              Leaf,
              { fail, holdMs: fail ? 0 : task.checkpoint.holdMs },
              { ownership: { kind: "task", taskId: task.id } },
            ),
          );
        return {
          status: "waiting",
          checkpoint: { ...task.checkpoint, phase: "report", children },
          on: children,
          policy: task.checkpoint.policy,
        };
      });
    },
    report: async (task, rt) => {
      const outcomes = await rt.outcomes(task.checkpoint.children);
      await rt.commit(() => ({
        status: "terminal",
        outcome: { kind: "completed", value: outcomes.map((o) => o?.kind ?? "live") },
      }));
    },
  },
  abort: () => "fanout aborted",
});

export const DEFINITIONS = [Steps, Leaf, Fanout];

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
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
