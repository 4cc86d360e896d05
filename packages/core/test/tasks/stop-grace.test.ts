import { describe, expect, it } from "vitest";
import { defineTask, TaskStateError } from "../../src/index.js";
import { create, gate, openTasks, taskOf } from "./support.js";

/** Rejects naming `what` when `promise` does not settle within `ms`: a hang fails the test instead. */
function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A task whose first run ignores its signal: it waits for `release` (never
 * for the signal), then tries to commit. Later runs complete at once.
 */
function deafTask(name: string) {
  const started = gate();
  const release = gate();
  let runs = 0;
  let lateCommit: unknown;
  const lateTried = gate();
  const Deaf = defineTask({
    name,
    version: 1,
    initial: () => ({ phase: "run" }),
    phases: {
      run: async (_task, rt) => {
        runs += 1;
        if (runs === 1) {
          started.open();
          await release.promise;
          lateCommit = await rt
            .commit(() => ({ status: "terminal", outcome: { kind: "completed", value: "late" } }))
            .catch((error: unknown) => error);
          lateTried.open();
          return;
        }
        await rt.commit(() => ({
          status: "terminal",
          outcome: { kind: "completed", value: runs },
        }));
      },
    },
    abort: () => "aborted while deaf",
  });
  return {
    Deaf,
    started: started.promise,
    release: () => release.open(),
    late: async () => {
      await lateTried.promise;
      return lateCommit;
    },
    runs: () => runs,
  };
}

describe("tasks > stop grace: a phase that ignores its signal cannot hold the scheduler forever", () => {
  it("stop() gives up after stopGraceMs, names the task in notStopped and reports it; the task stays running as stored and runs again at the next start; the abandoned phase can store nothing", async () => {
    const deaf = deafTask("t.deaf-stop");
    const w = await openTasks([deaf.Deaf], { scheduler: { stopGraceMs: 50 } });
    const id = await create(w.session, deaf.Deaf, null);
    await deaf.started;
    const report = await within(w.scheduler.stop(), "scheduler.stop()");
    expect(report.notStopped).toEqual([id]);
    expect(w.errors).toHaveLength(1);
    expect(w.errors[0]).toBeInstanceOf(TaskStateError);
    expect((w.errors[0] as Error).message).toContain(`task ${id} did not stop within 50 ms`);
    expect((await taskOf(w.session, id)).state.status).toBe("running");
    deaf.release();
    const late = await deaf.late();
    expect(late).toBeInstanceOf(TaskStateError);
    expect((late as Error).message).toContain("the scheduler gave up on this call");
    expect((await taskOf(w.session, id)).state.status).toBe("running");
    const next = await w.restart();
    const done = await within(next.scheduler.waitForTask(id), `task ${id} after restart`);
    expect(done.state).toMatchObject({ status: "terminal", outcome: { value: 2 } });
    await next.close();
  });

  it("stop() resolves with no task named when every phase honours its signal", async () => {
    const started = gate();
    const Polite = defineTask({
      name: "t.polite",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          started.open();
          await rt.sleep(60_000);
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([Polite], { scheduler: { stopGraceMs: 10_000 } });
    await create(w.session, Polite, null);
    await started.promise;
    expect(await within(w.scheduler.stop(), "scheduler.stop()")).toEqual({ notStopped: [] });
    await w.session.close();
  });

  it("an abort of a task whose phase ignores its signal goes on after stopGraceMs: the abort handler runs and the task ends aborted", async () => {
    const deaf = deafTask("t.deaf-abort");
    const w = await openTasks([deaf.Deaf], { scheduler: { stopGraceMs: 50 } });
    const id = await create(w.session, deaf.Deaf, null);
    await deaf.started;
    await w.scheduler.abortTask(id);
    const ended = await within(w.scheduler.waitForTask(id), `task ${id} after its abort`);
    expect(ended.state).toMatchObject({
      status: "terminal",
      outcome: { kind: "aborted", reason: "aborted while deaf" },
    });
    expect((w.errors[0] as Error).message).toContain(
      `task ${id} did not return within 50 ms after abort was requested`,
    );
    deaf.release();
    expect(await deaf.late()).toBeInstanceOf(TaskStateError);
    expect((await taskOf(w.session, id)).state).toMatchObject({ outcome: { kind: "aborted" } });
    await w.close();
  });

  it("rejects a stopGraceMs that is not a non-negative number", async () => {
    await expect(openTasks([], { scheduler: { stopGraceMs: -1 } })).rejects.toThrow(
      "stopGraceMs must be a non-negative number of milliseconds, got -1",
    );
  });
});
