import { beforeEach, describe, expect, it } from "vitest";
import { defineTask, type TaskId, type TaskToken } from "../../src/index.js";
import {
  HELD,
  HeldOwner,
  ROOT,
  blocked,
  create,
  openTasks,
  outcomeOf,
  ownedTask,
  taskOf,
  until,
  type TaskWorld,
} from "./support.js";

// Each test opens a new storage, so task ids repeat across tests: both are reset per test.
/** The signal of each task's holding phase, by task id. */
const signals = new Map<number, AbortSignal>();
/** Abort handlers in the order they ran. */
const handlers: number[] = [];

beforeEach(() => {
  signals.clear();
  handlers.length = 0;
});

/**
 * Holds in its phase until its signal aborts. With `owned`, it first creates
 * one task of that kind, owned by it: stacked, they make a live owned tree.
 */
function holder(name: string, owned?: TaskToken<null>) {
  return defineTask({
    name,
    version: 1,
    initial: () => ({ phase: owned ? "spawn" : "hold" }),
    phases: {
      spawn: async (task, rt) => {
        await rt.commit(async (tx) => {
          if (owned)
            await tx.createTask(owned, null, { ownership: { kind: "task", taskId: task.id } });
          return { phase: "hold" };
        });
      },
      hold: async (task, rt) => {
        signals.set(task.id, rt.signal);
        await rt.sleep(60_000); // rejects when rt.signal aborts
      },
    },
    abort: (task) => {
      handlers.push(task.id);
      return "compensated";
    },
  });
}
const Leaf = holder("t.leaf");
const Middle = holder("t.middle", Leaf);
const Top = holder("t.top", Middle);

/** Lets a FailingTop end: resolved by the test once the tree below it holds. */
let releaseTop: () => void = () => undefined;
/** What FailingTop saw right after its failed end was stored: its owned tasks' signals, aborted or not. */
let seenAtEnd: boolean[] = [];

/** Owns a Middle (which owns a Leaf), then ends failed itself once released, with them still live. */
const FailingTop = defineTask({
  name: "t.failing-top",
  version: 1,
  initial: () => ({ phase: "spawn" }),
  phases: {
    spawn: async (task, rt) => {
      await rt.commit(async (tx) => {
        await tx.createTask(Middle, null, { ownership: { kind: "task", taskId: task.id } });
        return { phase: "fail" };
      });
    },
    fail: async (_task, rt) => {
      await new Promise<void>((resolve) => (releaseTop = resolve));
      const error = { name: "Error", message: "top failed" };
      await rt.commit(() => ({ status: "terminal", outcome: { kind: "failed", error } }));
      seenAtEnd = [...signals.values()].map((signal) => signal.aborted);
    },
  },
  abort: () => "never: it ends failed",
});

/** Creates a Leaf owned by `owner`; `arm` runs inside that commit, once the Leaf is written. */
function createOwned(w: TaskWorld, owner: TaskId, arm?: () => void): Promise<TaskId> {
  return w.session.commit(async (tx) => {
    const id = await tx.createTask(Leaf, null, { ownership: { kind: "task", taskId: owner } });
    arm?.();
    return id;
  });
}

/** A HeldOwner and a Leaf it owns, made in one commit: the owner is held, the Leaf runs. */
async function heldOwnerWithChild(w: TaskWorld): Promise<[TaskId, TaskId]> {
  const [owner, child] = await w.session.commit(async (tx) => {
    const id = await tx.createTask(HeldOwner, null, {
      ownership: { kind: "ownerless" },
      conversationId: ROOT,
    });
    return [id, await tx.createTask(Leaf, null, { ownership: { kind: "task", taskId: id } })];
  });
  await until("the child holds", () => signals.has(child));
  expect(blocked(w)).toEqual([[owner, HELD]]);
  return [owner, child];
}

/** A HeldOwner, held by the scheduler (its `ready()` threw), then aborted. */
async function heldAbortedOwner(w: TaskWorld): Promise<TaskId> {
  const owner = await create(w.session, HeldOwner, null);
  await w.scheduler.waitForIdle();
  expect(await w.scheduler.abortTask(owner)).toBe(true);
  return owner;
}

describe("tasks > abort marks the live owned tasks", () => {
  it("abortTask marks the task, its child and its grandchild in one commit: when it resolves their records are marked and their signals aborted", async () => {
    const w = await openTasks([Top, Middle, Leaf]);
    try {
      const top = await create(w.session, Top, null);
      await until("the three tasks hold", () => signals.size === 3);
      const middle = await ownedTask(w, top);
      const leaf = await ownedTask(w, middle);
      const markedAt = new Map<number, number>();
      w.session.subscribeCommits((event) => {
        for (const write of event.writes)
          if (write.type === "task" && write.value.abortRequested && !markedAt.has(write.value.id))
            markedAt.set(write.value.id, event.seq);
      });

      expect(await w.scheduler.abortTask(top)).toBe(true);
      expect([top, middle, leaf].map((id) => signals.get(id)?.aborted)).toEqual([true, true, true]);
      for (const id of [middle, leaf])
        expect((await taskOf(w.session, id)).abortRequested).toBe(true);
      const seq = markedAt.get(top); // the abort's commit
      expect(seq).toBeTypeOf("number");
      expect([middle, leaf].map((id) => markedAt.get(id))).toEqual([seq, seq]);

      await w.scheduler.waitForIdle();
      expect(handlers).toEqual([leaf, middle, top]); // owned tasks end first
      const ended: number[] = [];
      for (const id of [leaf, middle, top]) {
        const task = await taskOf(w.session, id);
        expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "compensated" });
        ended.push(task.endedAt as number);
      }
      expect(ended).toEqual([...ended].sort((a, b) => a - b));
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("an owner that ends failed with live owned tasks: when its failed end is stored, its child's and grandchild's signals have aborted, before the scheduler's marks reach them", async () => {
    const w = await openTasks([FailingTop, Middle, Leaf]);
    try {
      const top = await create(w.session, FailingTop, null);
      await until("the child and grandchild hold", () => signals.size === 2);
      const middle = await ownedTask(w, top);
      const leaf = await ownedTask(w, middle);
      seenAtEnd = [];
      releaseTop();
      await until("the top has ended", () => seenAtEnd.length === 2);
      expect(seenAtEnd).toEqual([true, true]);

      await w.scheduler.waitForIdle();
      expect(handlers).toEqual([leaf, middle]); // owned tasks end first
      for (const id of [middle, leaf]) {
        const task = await taskOf(w.session, id);
        expect(task.abortRequested).toBe(true);
        expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "compensated" });
      }
      expect(outcomeOf(await taskOf(w.session, top))).toMatchObject({ kind: "failed" });
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("a held owner (its ready() threw) that is aborted passes the abort on: its running child's signal aborts and the child ends aborted; the owner stays held", async () => {
    const w = await openTasks([HeldOwner, Leaf]);
    try {
      const [owner, child] = await heldOwnerWithChild(w);
      expect(await w.scheduler.abortTask(owner)).toBe(true);
      expect(signals.get(child)?.aborted).toBe(true);
      await w.scheduler.waitForIdle();
      expect(outcomeOf(await taskOf(w.session, child))).toEqual({
        kind: "aborted",
        reason: "compensated",
      });
      expect(await taskOf(w.session, owner)).toMatchObject({
        abortRequested: true,
        state: { status: "pending" },
      });
      expect(blocked(w)).toEqual([[owner, HELD]]);
    } finally {
      await w.close();
    }
  });

  it("a task created for a held owner after its abort is abort-marked by the scheduler and ends aborted", async () => {
    const w = await openTasks([HeldOwner, Leaf]);
    try {
      const owner = await heldAbortedOwner(w);
      const late = await createOwned(w, owner);
      await until(
        "the late task ends",
        async () => outcomeOf(await taskOf(w.session, late)) !== undefined,
      );
      const task = await taskOf(w.session, late);
      expect(task.abortRequested).toBe(true);
      expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "compensated" });
      expect(blocked(w)).toEqual([[owner, HELD]]);
    } finally {
      await w.close();
    }
  });

  it("a held owner whose abort mark was stored without its owned tasks' marks (as an older version did) has them marked by the scheduler: its running child's signal aborts", async () => {
    const w = await openTasks([HeldOwner, Leaf]);
    try {
      const [owner, child] = await heldOwnerWithChild(w);
      await w.session.commit(async (tx) => {
        const task = await tx.task(owner);
        if (task) await tx.putTask({ ...task, abortRequested: true });
      });
      await until("the child's signal aborts", () => signals.get(child)?.aborted === true);
      await w.scheduler.waitForIdle();
      const task = await taskOf(w.session, child);
      expect(task.abortRequested).toBe(true);
      expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "compensated" });
      expect(blocked(w)).toEqual([[owner, HELD]]);
    } finally {
      await w.close();
    }
  });

  it("a held owner whose marking commit failed is not retried (it would fail the same way); its late tasks abort all the same, never running a phase: each stores its own mark and ends aborted", async () => {
    const w = await openTasks([HeldOwner, Leaf]);
    const refused = new Error("scan refused");
    const owner = await heldAbortedOwner(w);
    // Armed inside the creating commit: the scheduler's marking commit is the next task scan.
    const first = await createOwned(w, owner, () => {
      w.storage.readFault = { name: "scanTasks", error: refused, times: 1 };
    });
    await until(
      "the first late task ends",
      async () => outcomeOf(await taskOf(w.session, first)) !== undefined,
    );
    const second = await createOwned(w, owner); // the owner is looked at again
    await until(
      "the second late task ends",
      async () => outcomeOf(await taskOf(w.session, second)) !== undefined,
    );
    try {
      expect(w.errors.filter((error) => error === refused)).toHaveLength(1);
      expect(blocked(w)).toEqual([[owner, "a scheduler commit failed: Error: scan refused"]]);
      for (const id of [first, second]) {
        const task = await taskOf(w.session, id);
        expect(task.abortRequested).toBe(true);
        expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "compensated" });
        expect(signals.has(id)).toBe(false); // its holding phase never ran
      }
    } finally {
      await w.scheduler.stop();
    }
    const again = await w.restart();
    try {
      await again.scheduler.waitForIdle();
      expect(outcomeOf(await taskOf(again.session, owner))).toEqual({
        kind: "aborted",
        reason: "owner aborted",
      });
    } finally {
      await again.close();
    }
  });

  it("a tree whose records exceed the commit limit is aborted all the same: the task in one commit, its owned tasks by the scheduler", async () => {
    // Each owned task carries a 3,000-character input: the three do not fit in one 8 KiB commit.
    const BigLeaf = defineTask<string, { phase: "hold" }>({
      name: "t.big-leaf",
      version: 1,
      initial: () => ({ phase: "hold" }),
      phases: {
        hold: async (task, rt) => {
          signals.set(task.id, rt.signal);
          await rt.sleep(60_000);
        },
      },
      abort: (task) => {
        handlers.push(task.id);
        return "compensated";
      },
    });
    const Wide = defineTask({
      name: "t.wide",
      version: 1,
      initial: () => ({ phase: "spawn" }),
      phases: {
        spawn: async (task, rt) => {
          for (const fill of ["a", "b", "c"])
            await rt.commit(async (tx) => {
              await tx.createTask(BigLeaf, fill.repeat(3000), {
                ownership: { kind: "task", taskId: task.id },
              });
              return { phase: "spawn" };
            });
          await rt.commit(() => ({ phase: "hold" }));
        },
        hold: async (task, rt) => {
          signals.set(task.id, rt.signal);
          await rt.sleep(60_000);
        },
      },
      abort: (task) => {
        handlers.push(task.id);
        return "owner aborted";
      },
    });
    const w = await openTasks([Wide, BigLeaf], {
      session: { limits: { valueBytes: 4096, commitBytes: 8192 } },
    });
    try {
      const top = await create(w.session, Wide, null);
      await until("the four tasks hold", () => signals.size === 4);
      expect(await w.scheduler.abortTask(top)).toBe(true);
      await w.scheduler.waitForIdle();
      const leaves = (await w.session.read.scanTasks({ owner: top }, 10)).items.map((t) => t.id);
      expect(leaves).toHaveLength(3);
      for (const id of leaves)
        expect(outcomeOf(await taskOf(w.session, id))).toEqual({
          kind: "aborted",
          reason: "compensated",
        });
      expect(outcomeOf(await taskOf(w.session, top))).toEqual({
        kind: "aborted",
        reason: "owner aborted",
      });
      expect(handlers.at(-1)).toBe(top); // owned tasks end first
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
