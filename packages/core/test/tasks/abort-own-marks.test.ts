import { describe, expect, it } from "vitest";
import { defineTask, type TaskId } from "../../src/index.js";
import {
  HeldOwner,
  blocked,
  create,
  openTasks,
  outcomeOf,
  ownedTask,
  taskOf,
  until,
  type TaskWorld,
} from "./support.js";

// When the scheduler's commit marking an aborting owner's tasks fails, the
// owner is held and that commit is not retried; each owned task then stores
// its own mark. Not only the running ones: a task that is not ready (a tool
// call waiting for approval) or still waiting on live tasks would otherwise
// never be reserved, so never abort.

const refused = new Error("scan refused");

const ended = (w: TaskWorld, id: TaskId) => async () =>
  outcomeOf(await taskOf(w.session, id)) !== undefined;

/** Waits for a decision, like a tool call waiting for approval: never ready here. */
const Undecided = defineTask({
  name: "m.undecided",
  version: 1,
  initial: () => ({ phase: "approval" }),
  ready: () => false,
  phases: {
    approval: () => {
      throw new Error("never run: no decision comes");
    },
  },
  abort: () => "aborted undecided",
});

/** Runs until its signal aborts. */
const Busy = defineTask({
  name: "m.busy",
  version: 1,
  initial: () => ({ phase: "hold" }),
  phases: {
    hold: async (_task, rt) => {
      await rt.sleep(60_000);
    },
  },
  abort: () => "aborted busy",
});

/** Waits on the task its input names, then completes. */
const Waiter = defineTask<number, { phase: "wait" } | { phase: "after" }>({
  name: "m.waiter",
  version: 1,
  initial: () => ({ phase: "wait" }),
  phases: {
    wait: async (task, rt) => {
      await rt.commit(() => ({
        status: "waiting",
        checkpoint: { phase: "after" },
        on: [task.input as TaskId],
        policy: "allSettled",
      }));
    },
    after: async (_task, rt) => {
      await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed", value: null } }));
    },
  },
  abort: () => "aborted waiter",
});

/** Set by FailingTop once it is ready to fail; calling it lets it. */
const top: { release?: () => void } = {};
function releaseTop(): void {
  if (!top.release) throw new Error("the top is not ready to fail");
  top.release();
}

/** Owns a Waiter on the task its input names, then ends failed once released, failing the scheduler's next task scan. */
const FailingTop = defineTask<number, { phase: "spawn" } | { phase: "fail" }>({
  name: "m.failing-top",
  version: 1,
  initial: () => ({ phase: "spawn" }),
  phases: {
    spawn: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.createTask(Waiter, task.input, { ownership: { kind: "task", taskId: task.id } });
        return { phase: "fail" };
      });
    },
    fail: async (_task, rt) => {
      await new Promise<void>((resolve) => (top.release = resolve));
      await rt.commit(() => {
        const error = { name: "Error", message: "top failed" };
        return { status: "terminal", outcome: { kind: "failed", error } };
      });
    },
  },
  abort: () => "never: it ends failed",
});

describe("tasks > owned tasks the scheduler's marks did not reach store their own", () => {
  it("a not-ready task (waiting for a decision) created for an aborted owner whose marking commit fails ends aborted, marked", async () => {
    const w = await openTasks([HeldOwner, Undecided]);
    try {
      const owner = await create(w.session, HeldOwner, null);
      await w.scheduler.waitForIdle();
      await w.scheduler.abortTask(owner);
      const child = await w.session.commit(async (tx) => {
        const id = await tx.createTask(Undecided, null, {
          ownership: { kind: "task", taskId: owner },
        });
        w.storage.readFault = { name: "scanTasks", error: refused, times: 1 };
        return id;
      });
      await until("the undecided task ends", ended(w, child));
      const task = await taskOf(w.session, child);
      expect(task.abortRequested).toBe(true);
      expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "aborted undecided" });
      expect(w.errors.filter((e) => e === refused)).toHaveLength(1);
      expect(blocked(w)).toEqual([[owner, "a scheduler commit failed: Error: scan refused"]]);
    } finally {
      await w.close();
    }
  });

  it("when the marking commit succeeds, tasks created for an aborted owner are all marked in it: none stores its own mark", async () => {
    const w = await openTasks([HeldOwner, Undecided]);
    try {
      const owner = await create(w.session, HeldOwner, null);
      await w.scheduler.waitForIdle();
      await w.scheduler.abortTask(owner);
      const marks: number[][] = []; // per commit: the tasks it stored marked that were not before
      const markedBefore = new Set<number>();
      w.session.subscribeCommits((event) => {
        const now = event.writes.flatMap((write) =>
          write.type === "task" && write.value.abortRequested && !markedBefore.has(write.value.id)
            ? [write.value.id]
            : [],
        );
        for (const id of now) markedBefore.add(id);
        if (now.length > 0) marks.push(now);
      });
      const children = await w.session.commit(async (tx) => {
        const ids: TaskId[] = [];
        for (let i = 0; i < 5; i++)
          ids.push(
            await tx.createTask(Undecided, null, { ownership: { kind: "task", taskId: owner } }),
          );
        return ids;
      });
      for (const child of children) await until("the task ends", ended(w, child));
      expect(marks[0]).toEqual(children);
      expect(marks.slice(1)).toEqual([]);
      expect(w.errors.filter((e) => !(e instanceof RangeError))).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("a task waiting on a live task outside the tree, whose owner ends failed and whose marking commit fails, ends aborted, marked, while that task runs on", async () => {
    const w = await openTasks([Busy, Waiter, FailingTop]);
    try {
      const outside = await create(w.session, Busy, null);
      top.release = undefined;
      const owner = await create(w.session, FailingTop, outside as number);
      await until("the top is ready to fail", () => top.release !== undefined);
      const waiter = await ownedTask(w, owner);
      await until(
        "the waiter waits",
        async () => (await taskOf(w.session, waiter)).state.status === "waiting",
      );
      w.storage.readFault = { name: "scanTasks", error: refused, times: 1 };
      releaseTop();
      await until("the waiter ends", ended(w, waiter));
      const task = await taskOf(w.session, waiter);
      expect(task.abortRequested).toBe(true);
      expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "aborted waiter" });
      expect(blocked(w)).toEqual([[owner, "a scheduler commit failed: Error: scan refused"]]);
      await until("the top ends", ended(w, owner));
      expect(outcomeOf(await taskOf(w.session, owner))).toMatchObject({ kind: "failed" });
      expect((await taskOf(w.session, outside)).state.status).toBe("running");
      expect(w.errors).toEqual([refused]);
    } finally {
      await w.close();
    }
  });
});
