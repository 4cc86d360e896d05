import { afterEach, describe, expect, it, vi } from "vitest";
import { defineTask, Scheduler, TaskStateError } from "../../src/index.js";
import { longTimeout, MAX_TIMEOUT_MS } from "../../src/tasks/long-timeout.js";
import { create, gate, openTasks, outcomeOf, taskOf } from "./support.js";

/** The statuses a start loads, one scan each (pending, running, waiting, completing). */
const LIVE_STATUSES = 4;

afterEach(() => {
  vi.useRealTimers();
});

describe("tasks > waits longer than a timer can hold", () => {
  it("longTimeout fires after the whole delay, not after 1 ms, and can be cancelled", () => {
    vi.useFakeTimers();
    const fired: number[] = [];
    longTimeout(() => fired.push(1), MAX_TIMEOUT_MS + 1_000);
    const cancel = longTimeout(() => fired.push(2), MAX_TIMEOUT_MS * 2);
    vi.advanceTimersByTime(MAX_TIMEOUT_MS);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([1]);
    cancel();
    vi.advanceTimersByTime(MAX_TIMEOUT_MS * 2);
    expect(fired).toEqual([1]);
  });

  it("rt.sleep of a month is still sleeping when it is stopped, and a large stopGraceMs still waits for a phase winding down", async () => {
    const asleep = gate();
    const Sleeper = defineTask({
      name: "t.month",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          asleep.open();
          try {
            await rt.sleep(30 * 24 * 3_600_000);
          } finally {
            // Winding down takes a while after the signal.
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([Sleeper], { scheduler: { stopGraceMs: 2 ** 31 } });
    const id = await create(w.session, Sleeper, null);
    await asleep.promise;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await taskOf(w.session, id)).state.status).toBe("running");
    const started = Date.now();
    expect(await w.scheduler.stop()).toEqual({ notStopped: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    await w.session.close();
  });
});

describe("tasks > a stop while the scheduler starts", () => {
  it("the start rejects and nothing runs; another scheduler can start the session's tasks", async () => {
    let runs = 0;
    const Quickly = defineTask({
      name: "t.quickly",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          runs++;
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([Quickly], { start: false });
    const id = await create(w.session, Quickly, null);
    const starting = w.scheduler.start();
    expect(await w.scheduler.stop()).toEqual({ notStopped: [] });
    await expect(starting).rejects.toThrow(
      new TaskStateError("Scheduler.start: the scheduler was stopped while it started"),
    );
    expect(w.scheduler.inspect().started).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(0);
    const next = new Scheduler(w.session, [Quickly]);
    await next.start();
    await next.waitForIdle();
    expect(runs).toBe(1);
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({ kind: "completed" });
    await next.stop();
    await w.session.close();
  });

  it("an overtaken start whose load ends last does not replace the index of the start after it", async () => {
    const Held = defineTask({
      name: "t.held",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: { run: (_task, rt) => rt.sleep(60_000) },
      abort: () => undefined,
    });
    const w = await openTasks([Held], { start: false });
    // The first start's load reads its last status page at once and answers late: a snapshot
    // from before the stop. The starts after it read at once.
    const scan = w.storage.scanTasks.bind(w.storage);
    let calls = 0;
    w.storage.scanTasks = async (...args) => {
      const page = await scan(...args);
      if (++calls === LIVE_STATUSES) await new Promise((resolve) => setTimeout(resolve, 100));
      return page;
    };
    const first = w.scheduler.start();
    first.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the first start is loading
    await w.scheduler.stop();
    const id = await create(w.session, Held, null);
    await w.scheduler.start();
    await expect(first).rejects.toBeInstanceOf(TaskStateError);
    expect(w.scheduler.inspect().tasks.map((t) => t.id)).toEqual([id]);
    await w.close();
  });

  it("a waitForTask pending across stop() and start() resolves with an end stored while stopped", async () => {
    const Gone = defineTask({
      name: "t.gone",
      version: 1,
      initial: () => ({ phase: "a" }),
      phases: { a: () => new Promise<void>(() => undefined) },
      abort: () => "x",
    });
    // This process has no code for "t.gone": the task is blocked, and ends orphaned when aborted.
    const w = await openTasks([]);
    const id = await create(w.session, Gone, null);
    const waited = w.scheduler.waitForTask(id);
    await w.scheduler.stop();
    expect(await w.scheduler.abortTask(id)).toBe(true);
    await w.scheduler.start();
    const ended = await Promise.race([
      waited,
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 1_000)),
    ]);
    expect(ended).toMatchObject({
      id,
      state: { status: "terminal", outcome: { kind: "orphaned" } },
    });
    await w.close();
  });
});
