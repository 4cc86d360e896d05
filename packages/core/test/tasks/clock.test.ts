import { describe, expect, it } from "vitest";
import { defineTask, type TaskRecord } from "../../src/index.js";
import { Quick } from "./definitions.js";
import { create, gate, openTasks, taskOf } from "./support.js";

/** A clock the test sets: a good value, or whatever a broken clock returns. */
function settableClock(initial: unknown) {
  let value: unknown = initial;
  return { clock: () => value as number, set: (next: unknown) => (value = next) };
}

describe("tasks > the session clock", () => {
  for (const [what, bad] of [
    ["NaN", Number.NaN],
    ["a numeric string", "1700000000000"],
    ["undefined", undefined],
    ["Infinity", Number.POSITIVE_INFINITY],
  ] as const)
    it(`a clock returning ${what} is refused with a TypeError when a task is stamped; nothing is stored`, async () => {
      const time = settableClock(bad);
      const w = await openTasks([Quick], { session: { clock: time.clock } });
      const id = await create(w.session, Quick, { result: "completed" });
      await w.scheduler.waitForIdle();
      expect(w.errors).toHaveLength(1);
      const error = w.errors[0] as Error;
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toContain(`the session clock returned`);
      expect(error.message).toContain(`for task ${id} startedAt`);
      const task: TaskRecord = await taskOf(w.session, id);
      expect(task.state.status).toBe("pending");
      expect("startedAt" in task).toBe(false);
      expect(w.scheduler.inspect().blocked.map((t) => [t.id, t.blocked])).toEqual([
        [id, expect.stringContaining("TypeError: the session clock returned")],
      ]);
      await w.close();
    });

  it("a clock that breaks before a task ends leaves it running with no endedAt; rt.now() throws the same TypeError", async () => {
    const time = settableClock(1_000);
    const hold = gate();
    let nowError: unknown;
    const T = defineTask({
      name: "t.clocked",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          await hold.promise;
          nowError = (() => {
            try {
              return rt.now();
            } catch (error) {
              return error;
            }
          })();
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T], { session: { clock: time.clock } });
    const id = await create(w.session, T, null);
    await expect.poll(async () => (await taskOf(w.session, id)).state.status).toBe("running");
    time.set("later");
    hold.open();
    await w.scheduler.waitForIdle();
    expect(nowError).toBeInstanceOf(TypeError);
    expect((nowError as Error).message).toContain(
      `the session clock returned the string "later" for rt.now() in task ${id}`,
    );
    const task = await taskOf(w.session, id);
    expect(task.state.status).toBe("running");
    expect(task.startedAt).toBe(1_000);
    expect("endedAt" in task).toBe(false);
    // The phase's commit and then the scheduler's fault commit both refused to stamp endedAt.
    expect(w.errors.map((e) => (e as Error).message)).toEqual([
      expect.stringContaining(`returned the string "later" for task ${id} endedAt`),
    ]);
    await w.close();
  });

  it("a clock good again lets the next scheduler finish the task", async () => {
    const time = settableClock(Number.NaN);
    const w = await openTasks([Quick], { session: { clock: time.clock } });
    const id = await create(w.session, Quick, { result: "completed" });
    await w.scheduler.waitForIdle();
    expect((await taskOf(w.session, id)).state.status).toBe("pending");
    await w.scheduler.stop();
    time.set(2_000);
    await w.scheduler.start();
    await w.scheduler.waitForIdle();
    const task = await taskOf(w.session, id);
    expect(task.state).toEqual({ status: "terminal", outcome: { kind: "completed", value: id } });
    expect([task.startedAt, task.endedAt]).toEqual([2_000, 2_000]);
    await w.close();
  });
});
