import { describe, expect, it } from "vitest";
import { defineTask, type TaskRecord } from "../../src/index.js";
import { Steps } from "./definitions.js";
import { create, entryKinds, openTasks, outcomeOf, taskOf } from "./support.js";

/** Steps, but the effect phase hangs until the process "dies" (the test abandons the session). */
const Hanging = defineTask({
  ...Steps,
  phases: { ...Steps.phases, effect: () => new Promise<void>(() => undefined) },
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 2));
}

describe("tasks > recovery", () => {
  it("on start, running tasks return to pending with checkpoint and abort mark kept, then resume from the checkpoint", async () => {
    const first = await openTasks([Hanging]);
    const id = await create(first.session, Hanging, { label: "r" });
    await until(async () => {
      const t = await taskOf(first.session, id);
      return (
        t.state.status === "running" && (t.state.checkpoint as { phase: string }).phase === "effect"
      );
    });
    await first.session.commit(async (tx) => {
      const t = (await tx.task(id)) as TaskRecord;
      await tx.putTask({
        ...t,
        abortRequested: false,
        memos: { kept: { status: "done", value: 1 } },
      });
    });
    const startedAt = (await taskOf(first.session, id)).startedAt;
    // The process dies here. A new session over the same storage, no scheduler yet:
    const second = await first.restart([Steps]);
    await second.scheduler.stop();
    const before = await second.session.read.task(id);
    expect(before?.state.status).toBe("running");
    const recovered: TaskRecord[] = [];
    second.session.subscribeCommits((event) => {
      for (const write of event.writes) if (write.type === "task") recovered.push(write.value);
    });
    await second.scheduler.start();
    expect(recovered[0]?.state).toEqual({
      status: "pending",
      checkpoint: { phase: "effect", label: "r" },
    });
    expect(recovered[0]?.memos).toEqual({ kept: { status: "done", value: 1 } });
    await second.scheduler.waitForIdle();
    const done = await taskOf(second.session, id);
    expect(outcomeOf(done)).toEqual({ kind: "completed", value: "r" });
    expect(done.startedAt).toBe(startedAt); // first reservation's stamp is kept
    expect(await entryKinds(second.session)).toEqual(["intent", "outcome"]); // intent ran once
    await second.close();
  });

  it("an abort mark survives the restart: the recovered task runs its abort handler", async () => {
    const first = await openTasks([Hanging]);
    const id = await create(first.session, Hanging, { label: "a" });
    await until(async () => (await taskOf(first.session, id)).state.status === "running");
    await first.session.commit(async (tx) => {
      const t = (await tx.task(id)) as TaskRecord;
      await tx.putTask({ ...t, abortRequested: true });
    });
    const second = await first.restart([Steps]);
    await second.scheduler.waitForIdle();
    const task = await taskOf(second.session, id);
    expect(task.abortRequested).toBe(true);
    expect(outcomeOf(task)).toEqual({ kind: "aborted", reason: "stopped by request" });
    await second.close();
  });

  it("a task without a registered definition stays pending and is reported blocked, never dropped or faulted", async () => {
    const first = await openTasks([Steps], { start: false });
    const id = await create(first.session, Steps, { label: "b" });
    const other = await first.restart([]);
    await other.scheduler.waitForIdle();
    const task = await taskOf(other.session, id);
    expect(task.state).toEqual({ status: "pending", checkpoint: { phase: "intent", label: "b" } });
    const report = other.scheduler.inspect();
    expect(report.blocked).toEqual([
      expect.objectContaining({
        id,
        kind: "test.steps",
        status: "pending",
        blocked: 'no task definition registered for kind "test.steps"',
      }),
    ]);
    await other.scheduler.stop();
    const later = await other.restart([Steps]);
    await later.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(later.session, id))).toEqual({ kind: "completed", value: "b" });
    await later.close();
  });

  it("a task stored at an older version migrates its checkpoint at reservation", async () => {
    const V1 = defineTask({
      name: "t.versioned",
      version: 1,
      initial: (n: number) => ({ phase: "go", amount: n }),
      phases: { go: () => new Promise<void>(() => undefined) },
      abort: () => undefined,
    });
    const migrations: unknown[] = [];
    const V2 = defineTask({
      name: "t.versioned",
      version: 2,
      initial: (n: number) => ({ phase: "go", cents: n * 100 }),
      migrate: (checkpoint, fromVersion) => {
        migrations.push([checkpoint, fromVersion]);
        return { phase: "go", cents: (checkpoint as { amount: number }).amount * 100 };
      },
      phases: {
        go: async (task, rt) => {
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "completed", value: task.checkpoint.cents },
          }));
        },
      },
      abort: () => undefined,
    });
    const first = await openTasks([V1], { start: false });
    const id = await create(first.session, V1, 7);
    const second = await first.restart([V2]);
    await second.scheduler.waitForIdle();
    const task = await taskOf(second.session, id);
    expect(migrations).toEqual([[{ phase: "go", amount: 7 }, 1]]);
    expect(task.version).toBe(2);
    expect(outcomeOf(task)).toEqual({ kind: "completed", value: 700 });
    await second.close();
  });

  it("an older version without migrate faults with a clear error", async () => {
    const V1 = defineTask({
      name: "t.nomigrate",
      version: 1,
      initial: () => ({ phase: "go" }),
      phases: { go: () => undefined },
      abort: () => undefined,
    });
    const V3 = defineTask({ ...V1, version: 3 });
    const first = await openTasks([V1], { start: false });
    const id = await create(first.session, V1, null);
    const second = await first.restart([V3]);
    await second.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(second.session, id))).toEqual({
      kind: "faulted",
      error: {
        name: "TaskFaulted",
        code: "TASK_FAULTED",
        message: `task ${id} ("t.nomigrate") is stored at version 1, but the registered definition is version 3 and has no migrate`,
      },
    });
    await second.close();
  });

  it("a migrate that returns a value that is not JSON faults the task, naming where", async () => {
    const V1 = defineTask({
      name: "t.badmigrate",
      version: 1,
      initial: () => ({ phase: "go" }),
      phases: { go: () => undefined },
      abort: () => undefined,
    });
    const V2 = defineTask({
      ...V1,
      version: 2,
      migrate: (checkpoint) =>
        ({ ...(checkpoint as object), phase: "go", at: new Date(0) }) as never,
    });
    const first = await openTasks([V1], { start: false });
    const id = await create(first.session, V1, null);
    const second = await first.restart([V2]);
    await second.scheduler.waitForIdle();
    const outcome = outcomeOf(await taskOf(second.session, id)) as {
      kind: string;
      error: { message: string };
    };
    expect(outcome.kind).toBe("faulted");
    expect(outcome.error.message).toContain('task "t.badmigrate": migrate(checkpoint, 1).at');
    expect(second.scheduler.inspect().blocked).toEqual([]);
    await second.close();
  });

  it("a task stored at a newer version than the registered definition is blocked, not faulted", async () => {
    const V2 = defineTask({
      name: "t.newer",
      version: 2,
      initial: () => ({ phase: "go" }),
      phases: { go: () => undefined },
      abort: () => undefined,
    });
    const V1 = defineTask({ ...V2, version: 1 });
    const first = await openTasks([V2], { start: false });
    const id = await create(first.session, V2, null);
    const second = await first.restart([V1]);
    await second.scheduler.waitForIdle();
    expect((await taskOf(second.session, id)).state.status).toBe("pending");
    expect(second.scheduler.inspect().blocked[0]?.blocked).toBe(
      "stored at version 2, newer than the registered definition (version 1)",
    );
    await second.close();
  });

  it("stop() aborts rt.signal, leaves the cut-short task running, and the next start resumes it", async () => {
    const Patient = defineTask({
      ...Steps,
      name: "t.patient",
      phases: {
        ...Steps.phases,
        effect: async (task, rt) => {
          await rt.sleep(60_000);
          await Steps.phases.effect?.(task, rt);
        },
      },
    });
    const Quickly = defineTask({ ...Steps, name: "t.patient" });
    const w = await openTasks([Patient]);
    const id = await create(w.session, Patient, { label: "s" });
    await until(async () => {
      const t = await taskOf(w.session, id);
      return (
        t.state.status === "running" && (t.state.checkpoint as { phase: string }).phase === "effect"
      );
    });
    await w.scheduler.stop();
    expect((await taskOf(w.session, id)).state.status).toBe("running");
    const next = await w.restart([Quickly]);
    await next.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(next.session, id))).toEqual({ kind: "completed", value: "s" });
    await next.close();
  });
});
