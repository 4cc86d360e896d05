import { describe, expect, it } from "vitest";
import { defineTask, type TaskId, type TaskRecord } from "../../src/index.js";
import { create, gate, openTasks, outcomeOf, taskOf } from "./support.js";

type Ask = { phase: "ask" } | { phase: "act"; answer: string };

/** Waits (not ready) until someone stores an answer in its checkpoint, then acts on it once. */
function asking(ran: string[]) {
  return defineTask<null, Ask>({
    name: "t.ask",
    version: 1,
    initial: () => ({ phase: "ask" }),
    ready: (task) => (task.state as { checkpoint?: Ask }).checkpoint?.phase !== "ask",
    phases: {
      ask: () => {
        throw new Error("never run: the task is not ready while it asks");
      },
      act: async (task, rt) => {
        const { answer } = task.checkpoint as Extract<Ask, { phase: "act" }>;
        ran.push(answer);
        await rt.commit(() => ({
          status: "terminal",
          outcome: { kind: "completed", value: answer },
        }));
      },
    },
    abort: () => "nobody answered",
  });
}

/** What a person's decision does: one commit that stores the answer in the waiting task. */
async function answer(
  w: { session: import("../../src/index.js").Session },
  id: TaskId,
  text: string,
) {
  await w.session.commit(async (tx) => {
    const task = (await tx.task(id)) as TaskRecord;
    await tx.putTask({
      ...task,
      state: { status: "pending", checkpoint: { phase: "act", answer: text } },
    });
  });
}

describe("tasks > a task that is not ready waits for a decision from outside", () => {
  it("is not reserved, holds no slot and lets waitForIdle resolve; once answered it runs once", async () => {
    const ran: string[] = [];
    const Ask = asking(ran);
    const hold = gate();
    const Other = defineTask({
      name: "t.other",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          await hold.promise;
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    // One slot: had the asking task taken it, the other could never run.
    const w = await openTasks([Ask, Other], { scheduler: { concurrency: 1 } });
    try {
      const id = await create(w.session, Ask, null);
      const other = await create(w.session, Other, null);
      hold.open();
      await w.scheduler.waitForIdle();
      expect(outcomeOf(await taskOf(w.session, other))).toEqual({ kind: "completed" });
      expect((await taskOf(w.session, id)).state).toEqual({
        status: "pending",
        checkpoint: { phase: "ask" },
      });
      const seen = w.scheduler.inspect().tasks.find((t) => t.id === id);
      expect(seen).toMatchObject({ status: "pending", notReady: true, active: false });
      expect(seen?.blocked).toBeUndefined();
      expect(w.errors).toEqual([]);

      await answer(w, id, "yes");
      await w.scheduler.waitForIdle();
      expect(outcomeOf(await taskOf(w.session, id))).toEqual({ kind: "completed", value: "yes" });
      expect(ran).toEqual(["yes"]);
    } finally {
      await w.close();
    }
  });

  it("still waits after a restart, and runs once when answered then", async () => {
    const ran: string[] = [];
    const Ask = asking(ran);
    const w = await openTasks([Ask]);
    const id = await create(w.session, Ask, null);
    await w.scheduler.waitForIdle();
    const again = await w.restart();
    try {
      await again.scheduler.waitForIdle();
      expect((await taskOf(again.session, id)).state.status).toBe("pending");
      expect(ran).toEqual([]);
      await answer(again, id, "later");
      await again.scheduler.waitForIdle();
      expect(ran).toEqual(["later"]);
    } finally {
      await again.close();
    }
  });

  it("runs its abort handler when aborted while it waits", async () => {
    const ran: string[] = [];
    const Ask = asking(ran);
    const w = await openTasks([Ask]);
    try {
      const id = await create(w.session, Ask, null);
      await w.scheduler.waitForIdle();
      await w.scheduler.abortTask(id);
      await w.scheduler.waitForIdle();
      expect(outcomeOf(await taskOf(w.session, id))).toEqual({
        kind: "aborted",
        reason: "nobody answered",
      });
      expect(ran).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("holds a task whose ready() throws and reports it blocked with the error", async () => {
    const Broken = defineTask({
      name: "t.broken-ready",
      version: 1,
      initial: () => ({ phase: "run" }),
      ready: () => {
        throw new RangeError("no verdict");
      },
      phases: {
        run: async (_task, rt) => {
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([Broken]);
    try {
      const id = await create(w.session, Broken, null);
      await w.scheduler.waitForIdle();
      expect(w.scheduler.inspect().blocked.map((t) => [t.id, t.blocked])).toEqual([
        [id, "its definition's ready() threw: RangeError: no verdict"],
      ]);
      expect((await taskOf(w.session, id)).state.status).toBe("pending");
    } finally {
      await w.close();
    }
  });

  it("rejects a ready that is not a function at defineTask", () => {
    expect(() =>
      defineTask({
        name: "t.bad",
        version: 1,
        initial: () => ({ phase: "run" }),
        ready: true as never,
        phases: { run: () => undefined },
        abort: () => undefined,
      }),
    ).toThrow('defineTask "t.bad": ready must be a function');
  });
});
