import { defineDoc, defineTask, errorInfo, type TaskId } from "../../src/index.js";

/** A task-scope document, to check retirement at the terminal transition. */
export const Scratch = defineDoc<{ notes: string[] }>({
  kind: "test.scratch",
  version: 1,
  scope: "task",
  initial: () => ({ notes: [] }),
});

/** intent -> effect -> outcome, each phase one commit. */
export const Steps = defineTask({
  name: "test.steps",
  version: 1,
  initial: (input: { label: string }) => ({ phase: "intent", label: input.label }),
  phases: {
    intent: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, { kind: "intent", byTaskId: task.id });
        const scratch = await tx.doc(Scratch, task.id);
        scratch.notes.push("intent");
        return { phase: "effect", label: task.checkpoint.label };
      });
    },
    effect: async (task, rt) => {
      await rt.commit(async (tx) => {
        const scratch = await tx.doc(Scratch, task.id);
        scratch.notes.push("effect");
        return { phase: "outcome", label: task.checkpoint.label };
      });
    },
    outcome: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, { kind: "outcome", byTaskId: task.id });
        return {
          status: "terminal",
          outcome: { kind: "completed", value: task.checkpoint.label },
        };
      });
    },
  },
  abort: () => "stopped by request",
});

/** Finishes at once with the outcome its input names. */
export const Quick = defineTask({
  name: "test.quick",
  version: 1,
  initial: (input: { result: "completed" | "failed" }) => ({ phase: "run", result: input.result }),
  phases: {
    run: async (task, rt) => {
      await rt.commit(() =>
        task.checkpoint.result === "completed"
          ? { status: "terminal", outcome: { kind: "completed", value: task.id } }
          : {
              status: "terminal",
              outcome: { kind: "failed", error: errorInfo(new Error(`task ${task.id} failed`)) },
            },
      );
    },
  },
  abort: () => undefined,
});

/** Spawns `count` Quick children (results from `results`), waits per `policy`, then reports their outcomes. */
export const Parent = defineTask({
  name: "test.parent",
  version: 1,
  initial: (input: { results: ("completed" | "failed")[]; policy: "allSettled" | "failFast" }) => ({
    phase: "spawn",
    results: input.results,
    policy: input.policy,
    children: [] as TaskId[],
  }),
  phases: {
    spawn: async (task, rt) => {
      await rt.commit(async (tx) => {
        const on: TaskId[] = [];
        for (const result of task.checkpoint.results)
          on.push(
            await tx.createTask(
              Quick,
              { result },
              { ownership: { kind: "task", taskId: task.id } },
            ),
          );
        return {
          status: "waiting",
          checkpoint: { ...task.checkpoint, phase: "report", children: on },
          on,
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
  abort: () => undefined,
});
