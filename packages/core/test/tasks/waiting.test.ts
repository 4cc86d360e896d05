import { describe, expect, it } from "vitest";
import { defineTask, type TaskId, type TaskRecord } from "../../src/index.js";
import { Parent, Quick } from "./definitions.js";
import { create, gate, openTasks, outcomeOf, taskOf } from "./support.js";

describe("tasks > waiting on child tasks", () => {
  it("allSettled resumes once every awaited task is terminal, whatever the outcomes", async () => {
    const w = await openTasks([Parent, Quick]);
    const id = await create(w.session, Parent, {
      results: ["completed", "failed", "completed"],
      policy: "allSettled",
    });
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({
      kind: "completed",
      value: ["completed", "failed", "completed"],
    });
    await w.close();
  });

  it("the waiting state is stored with its awaited ids and policy, then resumes to running", async () => {
    const w = await openTasks([Parent, Quick]);
    const states: string[] = [];
    let waiting: unknown;
    w.session.subscribeCommits((event) => {
      for (const write of event.writes)
        if (write.type === "task" && write.value.kind === "test.parent") {
          states.push(write.value.state.status);
          if (write.value.state.status === "waiting") waiting = write.value.state;
        }
    });
    await create(w.session, Parent, { results: ["completed", "completed"], policy: "allSettled" });
    await w.scheduler.waitForIdle();
    expect(states).toEqual(["pending", "running", "waiting", "running", "terminal"]);
    expect(waiting).toMatchObject({
      status: "waiting",
      policy: "allSettled",
      on: [expect.any(Number), expect.any(Number)],
    });
    await w.close();
  });

  it("failFast resumes as soon as one awaited task ends other than completed", async () => {
    const hold = gate();
    const Slow = defineTask({
      name: "t.slow-child",
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
    const resumedWith: unknown[] = [];
    const P = defineTask({
      name: "t.failfast",
      version: 1,
      initial: () => ({ phase: "spawn", children: [] as TaskId[] }),
      phases: {
        spawn: async (task, rt) => {
          await rt.commit(async (tx) => {
            const own = { ownership: { kind: "task" as const, taskId: task.id } };
            const slow = await tx.createTask(Slow, null, own);
            const bad = await tx.createTask(Quick, { result: "failed" }, own);
            return {
              status: "waiting",
              checkpoint: { phase: "decide", children: [slow, bad] },
              on: [slow, bad],
              policy: "failFast",
            };
          });
        },
        decide: async (task, rt) => {
          resumedWith.push(
            ...(await rt.outcomes(task.checkpoint.children)).map((o) => o?.kind ?? "live"),
          );
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "failed", error: { name: "ChildFailed", message: "a child failed" } },
          }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([P, Slow, Quick]);
    const id = await create(w.session, P, null);
    // The slow child is still held: the parent resumed on the failure alone.
    while (resumedWith.length === 0) await new Promise((r) => setTimeout(r, 2));
    expect(resumedWith).toEqual(["live", "failed"]);
    hold.open();
    await w.scheduler.waitForIdle();
    const parent = await taskOf(w.session, id);
    // It failed while owning a live child: that child was aborted, then the parent became terminal.
    expect(outcomeOf(parent)).toMatchObject({ kind: "failed" });
    expect(parent.state.status).toBe("terminal");
    await w.close();
  });

  it("failFast with only completed results waits for all of them", async () => {
    const w = await openTasks([Parent, Quick]);
    const id = await create(w.session, Parent, {
      results: ["completed", "completed"],
      policy: "failFast",
    });
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({
      kind: "completed",
      value: ["completed", "completed"],
    });
    await w.close();
  });

  it("waiting on a task that does not exist faults the waiter", async () => {
    const T = defineTask({
      name: "t.wait-ghost",
      version: 1,
      initial: () => ({ phase: "wait" }),
      phases: {
        wait: async (_task, rt) => {
          await rt.commit(() => ({
            status: "waiting",
            checkpoint: { phase: "wait" },
            on: [987654 as TaskId],
            policy: "allSettled",
          }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toMatchObject({
      kind: "faulted",
      error: {
        name: "TaskFaulted",
        message: expect.stringMatching(/waits on task 987654, which does not exist/) as unknown,
      },
    });
    await w.close();
  });

  it("a waiting task resumes after a restart when its children settled meanwhile", async () => {
    const w = await openTasks([Parent, Quick], { start: false });
    const id = await create(w.session, Parent, { results: ["completed"], policy: "allSettled" });
    // Run only the parent's first phase: a scheduler without Quick leaves the child blocked.
    const partial = await w.restart([Parent]);
    await partial.scheduler.waitForIdle();
    expect((await taskOf(partial.session, id)).state.status).toBe("waiting");
    expect(partial.scheduler.inspect().blocked.map((t) => t.kind)).toEqual(["test.quick"]);
    await partial.scheduler.stop();
    const full = await partial.restart([Parent, Quick]);
    await full.scheduler.waitForIdle();
    const done: TaskRecord = await taskOf(full.session, id);
    expect(outcomeOf(done)).toEqual({ kind: "completed", value: ["completed"] });
    await full.close();
  });
});
