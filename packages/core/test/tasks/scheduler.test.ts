import { describe, expect, it } from "vitest";
import { defineTask, Scheduler, TaskStateError, type TaskId } from "../../src/index.js";
import { Echo, openTest } from "../support/session.js";
import { Quick, Steps } from "./definitions.js";
import { create, openTasks, ROOT } from "./support.js";

describe("tasks > defineTask", () => {
  it("rejects a malformed definition with a TypeError naming the field", () => {
    const base = {
      name: "t.x",
      version: 1,
      initial: () => ({ phase: "a" }),
      phases: { a: () => undefined },
      abort: () => undefined,
    };
    expect(() => defineTask({ ...base, name: "" })).toThrow(
      "defineTask: name must be a non-empty string",
    );
    expect(() => defineTask({ ...base, version: 0 })).toThrow(
      'defineTask "t.x": version must be a positive integer, got 0',
    );
    expect(() => defineTask({ ...base, phases: {} })).toThrow(
      'defineTask "t.x": phases must be an object with at least one phase',
    );
    expect(() => defineTask({ ...base, abort: undefined as never })).toThrow(
      'defineTask "t.x": abort must be a function',
    );
    // A misspelled hook would never run; an array of phases names them "0", "1".
    expect(() => defineTask({ ...base, onTerminl: () => undefined } as never)).toThrow(
      'defineTask "t.x": onTerminl is not a task definition field (name, version, initial, phases, abort, migrate, beforeTerminal, onTerminal, ready)',
    );
    expect(() => defineTask({ ...base, phases: [() => undefined] as never })).toThrow(
      'defineTask "t.x": phases must be an object with at least one phase',
    );
    expect(() => defineTask({ ...base, phases: { "": () => undefined } })).toThrow(
      'defineTask "t.x": a phase name must not be empty or blank',
    );
    // A definition spread with changes is still one.
    expect(defineTask({ ...defineTask(base), version: 2 }).version).toBe(2);
  });

  it("the Scheduler refuses an option it does not know", async () => {
    const { session } = await openTest();
    expect(() => new Scheduler(session, [], { concurency: 1 } as never)).toThrow(
      "Scheduler: concurency is not a scheduler option (concurrency, onError, stopGraceMs)",
    );
    await session.close();
  });

  it("is the token tx.createTask takes; a bad initial checkpoint fails the create and stores nothing", async () => {
    const Bad = defineTask({
      name: "t.bad-initial",
      version: 1,
      initial: () => ({ phase: "nope" }),
      phases: { a: () => undefined },
      abort: () => undefined,
    });
    const w = await openTasks([Bad], { start: false });
    await expect(create(w.session, Bad, null)).rejects.toThrow(
      'task "t.bad-initial": initial(input).phase "nope" is not one of its phases (a)',
    );
    expect((await w.session.read.scanTasks({}, 10)).items).toEqual([]);
    await w.session.close();
  });
});

describe("tasks > scheduler", () => {
  it("inspect reports every live task with status, activity and blocked reasons", async () => {
    const w = await openTasks([Steps], { start: false });
    const a = await create(w.session, Steps, { label: "a" });
    const b = await create(w.session, Echo as never, null);
    expect(w.scheduler.inspect()).toEqual({ started: false, tasks: [], blocked: [], running: 0 });
    await w.scheduler.start();
    await w.scheduler.waitForIdle();
    const report = w.scheduler.inspect();
    expect(report.started).toBe(true);
    expect(report.tasks).toEqual([
      {
        id: b,
        kind: "test.echo",
        version: 1,
        conversationId: ROOT,
        owner: undefined,
        status: "pending",
        abortRequested: false,
        active: false,
        blocked: 'no task definition registered for kind "test.echo"',
      },
    ]);
    expect(report.blocked.map((t) => t.id)).toEqual([b]);
    void a;
    await w.close();
  });

  it("waitForIdle resolves once work created after it was called is done too", async () => {
    const w = await openTasks([Quick]);
    const ids: TaskId[] = [];
    const idle = w.scheduler.waitForIdle();
    for (let i = 0; i < 5; i++) ids.push(await create(w.session, Quick, { result: "completed" }));
    await idle;
    await w.scheduler.waitForIdle();
    for (const id of ids) expect((await w.session.read.task(id))?.state.status).toBe("terminal");
    await w.close();
  });

  it("one scheduler per session; waitForIdle needs a started scheduler; duplicate names are refused", async () => {
    const w = await openTasks([Quick]);
    const second = new Scheduler(w.session, [Quick]);
    await expect(second.start()).rejects.toBeInstanceOf(TaskStateError);
    await expect(second.waitForIdle()).rejects.toBeInstanceOf(TaskStateError);
    expect(() => new Scheduler(w.session, [Quick, Quick])).toThrow(
      'Scheduler: task "test.quick" is registered twice',
    );
    expect(() => new Scheduler(w.session, [Quick], { concurrency: 0 })).toThrow(
      "Scheduler: concurrency must be a positive integer, got 0",
    );
    await w.scheduler.stop();
    await second.start(); // the session is free again
    await second.stop();
    await w.session.close();
  });

  it("an onTerminal hook that throws holds the task (reported blocked), it is never silently ended", async () => {
    const T = defineTask({
      name: "t.hook-throws",
      version: 1,
      initial: () => ({ phase: "go" }),
      phases: {
        go: (_t, rt) =>
          rt
            .commit(() => ({ status: "terminal", outcome: { kind: "completed" } }))
            .then(() => undefined),
      },
      abort: () => undefined,
      onTerminal: () => {
        throw new Error("settle failed");
      },
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect((await w.session.read.task(id))?.state.status).toBe("running");
    const [blocked] = w.scheduler.inspect().blocked;
    expect(blocked?.id).toBe(id);
    expect(blocked?.blocked).toMatch(/settle failed/);
    // The phase saw its terminal commit reject; the fault commit then failed the same way and was reported.
    expect(w.errors.map((e) => (e as Error).message)).toEqual(["settle failed"]);
    await w.close();
  });
});
