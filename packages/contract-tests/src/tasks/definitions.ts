import {
  defineDoc,
  defineTask,
  ROOT_CONVERSATION_ID,
  type Json,
  type TaskAbortHandler,
  type TaskCheckpoint,
  type TaskDefinition,
  type TaskId,
  type WaitPolicy,
} from "@durably/core";
import { holdAt } from "./gates.js";

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

/**
 * Finishes at once: completed, or failed when its input says so. With
 * `gate`, it first holds there until the scenario opens it (a child that is
 * live for exactly as long as the scenario needs, whatever the machine's load).
 */
export const Leaf = defineTask({
  name: "conformance.leaf",
  version: 1,
  initial: (input: { fail: boolean; holdMs?: number; gate?: string }) => ({
    phase: "run",
    fail: input.fail,
    holdMs: input.holdMs ?? 0,
    gate: input.gate ?? null,
  }),
  phases: {
    run: async (task, rt) => {
      if (task.checkpoint.gate !== null) await holdAt(task.checkpoint.gate, rt.signal);
      // A negative hold makes rt.sleep throw: how the scenarios get a phase that throws.
      else if (task.checkpoint.holdMs !== 0) await rt.sleep(task.checkpoint.holdMs);
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

/**
 * Spawns Leaf children, waits on them per its policy, then reports their
 * outcome kinds. The children that do not fail hold `holdMs`, or at `gate`.
 */
export const Fanout = defineTask({
  name: "conformance.fanout",
  version: 1,
  initial: (input: {
    fails: boolean[];
    policy: "allSettled" | "failFast";
    holdMs?: number;
    gate?: string;
  }) => ({
    phase: "spawn",
    fails: input.fails,
    policy: input.policy,
    holdMs: input.holdMs ?? 0,
    gate: input.gate ?? null,
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
              fail
                ? { fail }
                : {
                    fail,
                    holdMs: task.checkpoint.holdMs,
                    ...(task.checkpoint.gate === null ? {} : { gate: task.checkpoint.gate }),
                  },
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

/** An abort handler that leaves an "abort-handler" entry (evidence it ran), then returns `reason`. */
function recordingAbort<I extends Json, C extends TaskCheckpoint>(
  reason: string,
): TaskAbortHandler<I, C> {
  return async (task, rt) => {
    await rt.commit(async (tx) => {
      await tx.appendEntry(task.conversationId, { kind: "abort-handler", byTaskId: task.id });
      return undefined;
    });
    return reason;
  };
}

/**
 * Holds in its phase at gate `input.gate` until the scenario opens it (or
 * rt.signal aborts), then completes with the gate's value. With `abortGate`,
 * its abort handler holds at that gate too, so it stays live after its
 * abort mark for as long as the scenario wants.
 */
export const Held = defineTask({
  name: "conformance.held",
  version: 1,
  initial: (input: { gate: string; abortGate?: string }) => ({
    phase: "hold",
    gate: input.gate,
    abortGate: input.abortGate ?? null,
  }),
  phases: {
    hold: async (task, rt) => {
      const value = await holdAt(task.checkpoint.gate, rt.signal);
      await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed", value } }));
    },
  },
  abort: async (task, rt) => {
    if (task.checkpoint.abortGate !== null) await holdAt(task.checkpoint.abortGate, rt.signal);
    return "held aborted";
  },
});

/**
 * Waits (durably) on the tasks `input.on` names, or, with `input.gate`, on
 * the task ids the scenario opens that gate with; then completes with their
 * outcome kinds. Its abort handler leaves an "abort-handler" entry.
 */
export const Waiter = defineTask({
  name: "conformance.waiter",
  version: 1,
  initial: (input: { on?: TaskId[]; gate?: string; policy?: WaitPolicy }) => ({
    phase: "wait",
    on: input.on ?? null,
    gate: input.gate ?? null,
    policy: input.policy ?? "allSettled",
    awaited: [] as TaskId[],
  }),
  phases: {
    wait: async (task, rt) => {
      const { on, gate, policy } = task.checkpoint;
      const awaited = on ?? ((await holdAt(gate as string, rt.signal)) as TaskId[]);
      await rt.commit(() => ({
        status: "waiting",
        checkpoint: { ...task.checkpoint, phase: "report", awaited },
        on: awaited,
        policy,
      }));
    },
    report: async (task, rt) => {
      const outcomes = await rt.outcomes(task.checkpoint.awaited);
      await rt.commit(() => ({
        status: "terminal",
        outcome: { kind: "completed", value: outcomes.map((o) => o?.kind ?? "live") },
      }));
    },
  },
  abort: recordingAbort("waiter aborted"),
});

/**
 * Awaits, in memory (`rt.waitForTask`, holding its slot), the task whose id
 * the scenario opens gate `input.gate` with; then completes with that task's
 * outcome kind. An error from the wait is left to fault the task.
 */
export const Awaiter = defineTask({
  name: "conformance.awaiter",
  version: 1,
  initial: (input: { gate: string }) => ({ phase: "await", gate: input.gate }),
  phases: {
    await: async (task, rt) => {
      const id = (await holdAt(task.checkpoint.gate, rt.signal)) as TaskId;
      const other = await rt.waitForTask(id);
      const kind = other.state.status === "terminal" ? other.state.outcome.kind : "live";
      await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed", value: kind } }));
    },
  },
  abort: () => "awaiter aborted",
});

export type SpawnedChild =
  { kind: "held"; gate: string; abortGate?: string } | { kind: "waiter"; gate: string };

/**
 * Creates one owned task per entry of `input.children` (a Held at that gate,
 * or a Waiter that waits on the ids its gate is opened with). With `then:
 * "complete"` the same commit finishes it `completed` (so it holds
 * `completing` while they live); with `then: "hold"` it first holds at
 * `input.gate`. Its abort handler leaves an "abort-handler" entry.
 */
export const Spawner = defineTask({
  name: "conformance.spawner",
  version: 1,
  initial: (input: { children: SpawnedChild[]; then: "complete" | "hold"; gate?: string }) => ({
    phase: "spawn",
    children: input.children,
    then: input.then,
    gate: input.gate ?? null,
  }),
  phases: {
    spawn: async (task, rt) => {
      await rt.commit(async (tx) => {
        const ownership = { ownership: { kind: "task" as const, taskId: task.id } };
        for (const child of task.checkpoint.children) {
          if (child.kind === "held") await tx.createTask(Held, child, ownership);
          else await tx.createTask(Waiter, { gate: child.gate }, ownership);
        }
        return task.checkpoint.then === "complete"
          ? { status: "terminal", outcome: { kind: "completed", value: "spawner done" } }
          : { ...task.checkpoint, phase: "hold" };
      });
    },
    hold: async (task, rt) => {
      await holdAt(task.checkpoint.gate as string, rt.signal);
      await rt.commit(() => ({
        status: "terminal",
        outcome: { kind: "completed", value: "spawner done" },
      }));
    },
  },
  abort: recordingAbort("spawner aborted"),
});

type NestInput = { depth: number; gate: string };
type NestCheckpoint = NestInput & { phase: string };

/**
 * Holds at gate `input.gate` until the scenario opens it (or rt.signal
 * aborts), then completes. With `depth` above 0 it first creates a Nest one
 * level shallower, owned by it, holding at the same gate: a chain of live
 * owned tasks `depth` below it. (Typed by hand: it creates tasks of its own
 * kind, which inference cannot follow.)
 */
export const Nest: TaskDefinition<NestInput, NestCheckpoint> = defineTask({
  name: "conformance.nest",
  version: 1,
  initial: (input: NestInput) => ({ phase: "spawn", ...input }),
  phases: {
    spawn: async (task, rt) => {
      await rt.commit(async (tx) => {
        const { depth, gate } = task.checkpoint;
        if (depth > 0)
          await tx.createTask(
            Nest,
            { depth: depth - 1, gate },
            { ownership: { kind: "task", taskId: task.id } },
          );
        return { ...task.checkpoint, phase: "hold" };
      });
    },
    hold: async (task, rt) => {
      const value = await holdAt(task.checkpoint.gate, rt.signal);
      await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed", value } }));
    },
  },
  abort: (task) => `nest ${task.id} aborted`,
});

export const DEFINITIONS = [Steps, Leaf, Fanout, Held, Waiter, Awaiter, Spawner, Nest];
