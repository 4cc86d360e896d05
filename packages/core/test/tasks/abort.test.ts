import { describe, expect, it } from "vitest";
import { defineTask, UnknownRecord, type TaskId } from "../../src/index.js";
import { Steps } from "./definitions.js";
import { create, entryKinds, gate, openTasks, outcomeOf, taskOf } from "./support.js";

/** A phase that runs until its signal aborts; the handler records when it ran. */
function blocker(name: string, log: string[]) {
  return defineTask({
    name,
    version: 1,
    initial: (input: { children?: number }) => ({ phase: "run", children: input.children ?? 0 }),
    phases: {
      run: async (task, rt) => {
        if (task.checkpoint.children > 0) {
          await rt.commit(async (tx) => {
            for (let i = 0; i < task.checkpoint.children; i++)
              await tx.createTask(
                Child,
                { children: 0 },
                { ownership: { kind: "task", taskId: task.id } },
              );
            return { phase: "run", children: 0 };
          });
          return;
        }
        log.push(`${name} ${task.id} started`);
        await rt.sleep(60_000); // rejects when rt.signal aborts
      },
    },
    abort: async (task, rt) => {
      log.push(`${name} ${task.id} abort handler`);
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, {
          kind: `compensated ${name}`,
          byTaskId: task.id,
        });
        return undefined;
      });
      return "compensated";
    },
  });
}
const log: string[] = [];
const Child = blocker("t.child", log);
const Owner = blocker("t.owner", log);

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 2));
}

describe("tasks > abort", () => {
  it("abortTask marks abortRequested, aborts rt.signal, runs the handler and ends aborted with its reason", async () => {
    log.length = 0;
    const w = await openTasks([Owner, Child]);
    const id = await create(w.session, Owner, {});
    await until(() => log.length > 0);
    expect(await w.scheduler.abortTask(id)).toBe(true);
    await w.scheduler.waitForIdle();
    const task = await taskOf(w.session, id);
    expect(task.abortRequested).toBe(true);
    expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "compensated" });
    expect(task.state.status).toBe("terminal");
    expect(log).toEqual([`t.owner ${id} started`, `t.owner ${id} abort handler`]);
    expect(await entryKinds(w.session)).toEqual(["compensated t.owner"]);
    await w.close();
  });

  it("the handler runs after owned work drained: children are aborted first", async () => {
    log.length = 0;
    const w = await openTasks([Owner, Child]);
    const id = await create(w.session, Owner, { children: 2 });
    await until(() => log.filter((l) => l.includes("started")).length === 3);
    await w.scheduler.abortTask(id);
    await w.scheduler.waitForIdle();
    const handlers = log.filter((l) => l.includes("abort handler"));
    expect(handlers).toHaveLength(3);
    expect(handlers[2]).toBe(`t.owner ${id} abort handler`);
    const children = await w.session.read.scanTasks({ owner: id }, 10);
    for (const child of children.items) {
      expect(child.abortRequested).toBe(true);
      expect(outcomeOf(child)).toEqual({ kind: "aborted", reason: "compensated" });
    }
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({
      kind: "aborted",
      reason: "compensated",
    });
    await w.close();
  });

  it("aborting a pending task that never ran still runs its handler", async () => {
    log.length = 0;
    const w = await openTasks([Owner, Child], { start: false });
    const id = await create(w.session, Owner, {});
    await w.scheduler.abortTask(id);
    await w.scheduler.start();
    await w.scheduler.waitForIdle();
    expect(log).toEqual([`t.owner ${id} abort handler`]);
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({
      kind: "aborted",
      reason: "compensated",
    });
    await w.close();
  });

  it("a handler that throws faults the task", async () => {
    const T = defineTask({
      name: "t.bad-handler",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: { run: (_t, rt) => rt.sleep(60_000) },
      abort: () => {
        throw new Error("cannot compensate");
      },
    });
    const w = await openTasks([T], { start: false });
    const id = await create(w.session, T, null);
    await w.scheduler.abortTask(id);
    await w.scheduler.start();
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({
      kind: "faulted",
      error: { name: "Error", message: "cannot compensate" },
    });
    await w.close();
  });

  it("abortTask on a terminal task resolves false; on an unknown task it rejects UnknownRecord", async () => {
    const w = await openTasks([Steps]);
    const id = await create(w.session, Steps, { label: "done" });
    await w.scheduler.waitForIdle();
    expect(await w.scheduler.abortTask(id)).toBe(false);
    expect((await taskOf(w.session, id)).abortRequested).toBe(false);
    await expect(w.scheduler.abortTask(424242 as TaskId)).rejects.toBeInstanceOf(UnknownRecord);
    await w.close();
  });

  it("owned tasks are aborted when their owner fails; the owner holds completing until they end", async () => {
    log.length = 0;
    const failing = gate();
    const F = defineTask({
      name: "t.failing-owner",
      version: 1,
      initial: () => ({ phase: "spawn" }),
      phases: {
        spawn: async (task, rt) => {
          await rt.commit(async (tx) => {
            await tx.createTask(Child, {}, { ownership: { kind: "task", taskId: task.id } });
            return { phase: "fail" };
          });
        },
        fail: async (_task, rt) => {
          await failing.promise;
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "failed", error: { name: "E", message: "owner failed" } },
          }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([F, Child]);
    const statuses: string[] = [];
    const id = await create(w.session, F, null);
    w.session.subscribeCommits((event) => {
      for (const write of event.writes)
        if (write.type === "task" && write.value.id === id) statuses.push(write.value.state.status);
    });
    await until(() => log.length === 1);
    failing.open();
    await w.scheduler.waitForIdle();
    expect(statuses.slice(-2)).toEqual(["completing", "terminal"]);
    const [child] = (await w.session.read.scanTasks({ owner: id }, 10)).items;
    expect(child?.abortRequested).toBe(true);
    expect(outcomeOf(child as never)).toEqual({ kind: "aborted", reason: "compensated" });
    expect(outcomeOf(await taskOf(w.session, id))).toMatchObject({ kind: "failed" });
    await w.close();
  });

  it("a task created for an owner that is already terminal ends orphaned without running", async () => {
    const w = await openTasks([Steps]);
    const owner = await create(w.session, Steps, { label: "owner" });
    await w.scheduler.waitForIdle();
    const child = await w.session.commit((tx) =>
      tx.createTask(Steps, { label: "late" }, { ownership: { kind: "task", taskId: owner } }),
    );
    await w.scheduler.waitForIdle();
    const task = await taskOf(w.session, child);
    expect(task.state).toEqual({ status: "terminal", outcome: { kind: "orphaned" } });
    expect(await entryKinds(w.session)).toEqual(["intent", "outcome"]); // only the owner's
    await w.close();
  });
});

describe("tasks > completing", () => {
  it("a task finishing completed while it owns live tasks holds completing; they keep running; then it is terminal", async () => {
    const release = gate();
    const Bg = defineTask({
      name: "t.background",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_t, rt) => {
          await release.promise;
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "completed", value: "bg" },
          }));
        },
      },
      abort: () => undefined,
    });
    const Fg = defineTask({
      name: "t.foreground",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (task, rt) => {
          await rt.commit(async (tx) => {
            await tx.createTask(Bg, null, {
              ownership: { kind: "task", taskId: task.id },
              background: true,
            });
            return { status: "terminal", outcome: { kind: "completed", value: "fg" } };
          });
        },
      },
      abort: () => undefined,
      onTerminal: (tx, task) =>
        tx.appendEntry(task.conversationId, { kind: "fg settled" }).then(() => undefined),
    });
    const w = await openTasks([Fg, Bg]);
    const id = await create(w.session, Fg, null);
    await until(async () => (await taskOf(w.session, id)).state.status === "completing");
    expect((await taskOf(w.session, id)).state).toEqual({
      status: "completing",
      outcome: { kind: "completed", value: "fg" },
    });
    expect(await entryKinds(w.session)).toEqual([]); // onTerminal waits for the terminal transition
    release.open();
    await w.scheduler.waitForIdle();
    const task = await taskOf(w.session, id);
    expect(task.state).toEqual({ status: "terminal", outcome: { kind: "completed", value: "fg" } });
    expect(typeof task.endedAt).toBe("number");
    expect(await entryKinds(w.session)).toEqual(["fg settled"]);
    const [bg] = (await w.session.read.scanTasks({ owner: id }, 10)).items;
    expect(outcomeOf(bg as never)).toEqual({ kind: "completed", value: "bg" });
    expect(bg?.abortRequested).toBe(false);
    await w.close();
  });
});
