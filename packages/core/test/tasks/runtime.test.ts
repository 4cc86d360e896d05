import { describe, expect, it } from "vitest";
import { defineTask, UnknownRecord, type TaskId, type TaskRecord } from "../../src/index.js";
import { Quick } from "./definitions.js";
import { create, openTasks, outcomeOf, taskOf } from "./support.js";

describe("tasks > runtime", () => {
  it("rt.now is the session clock; getTask, waitForTask and outcomes read other tasks", async () => {
    const seen: Record<string, unknown> = {};
    const T = defineTask({
      name: "t.reader",
      version: 1,
      initial: () => ({ phase: "spawn", child: 0 }),
      phases: {
        spawn: async (task, rt) => {
          seen.now = rt.now();
          let child = 0 as TaskId;
          await rt.commit(async (tx) => {
            child = await tx.createTask(
              Quick,
              { result: "completed" },
              { ownership: { kind: "task", taskId: task.id } },
            );
            return { phase: "read", child };
          });
          seen.beforeOutcome = (await rt.outcomes([child]))[0];
        },
        read: async (task, rt) => {
          const child = task.checkpoint.child as TaskId;
          const done: TaskRecord = await rt.waitForTask(child);
          seen.waited = done.state.status;
          seen.got = (await rt.getTask(child))?.kind;
          seen.missing = await rt.getTask(999_999 as TaskId);
          seen.outcomes = await rt.outcomes([child]);
          seen.unknown = await rt
            .outcomes([999_999 as TaskId])
            .catch((e: unknown) => e instanceof UnknownRecord);
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T, Quick], { session: { clock: () => 4242 } });
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({ kind: "completed" });
    expect(seen).toEqual({
      now: 4242,
      beforeOutcome: undefined,
      waited: "terminal",
      got: "test.quick",
      missing: undefined,
      outcomes: [{ kind: "completed", value: expect.any(Number) as unknown }],
      unknown: true,
    });
    expect((await taskOf(w.session, id)).startedAt).toBe(4242);
    await w.close();
  });

  it("rt.sleep rejects with the signal's reason when the task is aborted", async () => {
    const reasons: string[] = [];
    const T = defineTask({
      name: "t.sleeper",
      version: 1,
      initial: () => ({ phase: "nap" }),
      phases: {
        nap: async (_task, rt) => {
          try {
            await rt.sleep(60_000);
          } catch (error) {
            reasons.push((error as DOMException).name, String(rt.signal.aborted));
            throw error;
          }
        },
      },
      abort: () => "woken",
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    while ((await taskOf(w.session, id)).state.status !== "running")
      await new Promise((r) => setTimeout(r, 1));
    await w.scheduler.abortTask(id);
    await w.scheduler.waitForIdle();
    expect(reasons).toEqual(["AbortError", "true"]);
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({ kind: "aborted", reason: "woken" });
    await w.close();
  });

  it("scheduler.waitForTask resolves with the terminal record and rejects UnknownRecord for a task that does not exist", async () => {
    const w = await openTasks([Quick]);
    const id = await create(w.session, Quick, { result: "failed" });
    const done = await w.scheduler.waitForTask(id);
    expect(outcomeOf(done)).toMatchObject({ kind: "failed" });
    expect(outcomeOf(await w.scheduler.waitForTask(id))).toMatchObject({ kind: "failed" }); // already terminal
    await expect(w.scheduler.waitForTask(999_999 as TaskId)).rejects.toBeInstanceOf(UnknownRecord);
    await w.close();
  });
});
