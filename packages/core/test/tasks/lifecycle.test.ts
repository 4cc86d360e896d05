import { describe, expect, it } from "vitest";
import {
  defineTask,
  Session,
  TaskFaulted,
  TaskStateError,
  type TaskId,
  type TaskRecord,
} from "../../src/index.js";
import { Scratch, Steps } from "./definitions.js";
import { create, entryKinds, gate, openTasks, outcomeOf, taskOf } from "./support.js";

describe("tasks > lifecycle", () => {
  it("pending -> running -> terminal through every phase, each commit carrying its entries and documents", async () => {
    let now = 1000;
    const w = await openTasks([Steps], { session: { clock: () => (now += 10) } });
    const seen: string[] = [];
    w.session.subscribeCommits((event) => {
      for (const write of event.writes)
        if (write.type === "task") seen.push(write.value.state.status);
    });
    const id = await create(w.session, Steps, { label: "x" });
    await w.scheduler.waitForIdle();
    const task = await taskOf(w.session, id);
    expect(task.state).toEqual({ status: "terminal", outcome: { kind: "completed", value: "x" } });
    // pending (create), running (reservation), running (intent), running (effect), terminal (outcome)
    expect(seen).toEqual(["pending", "running", "running", "running", "terminal"]);
    expect(typeof task.startedAt).toBe("number");
    expect(typeof task.endedAt).toBe("number");
    expect((task.endedAt as number) > (task.startedAt as number)).toBe(true);
    expect(await entryKinds(w.session)).toEqual(["intent", "outcome"]);
    expect(w.errors).toEqual([]);
    await w.close();
  });

  it("the terminal commit retires the task's documents in the same commit", async () => {
    const w = await openTasks([Steps]);
    const retiredAt: number[] = [];
    let terminalSeq = 0;
    w.session.subscribeCommits((event) => {
      for (const write of event.writes) {
        if (write.type === "document.retire") retiredAt.push(event.seq);
        if (write.type === "task" && write.value.state.status === "terminal")
          terminalSeq = event.seq;
      }
    });
    const id = await create(w.session, Steps, { label: "d" });
    await w.scheduler.waitForIdle();
    expect(retiredAt).toEqual([terminalSeq]);
    expect(await w.session.snapshot(Scratch, id)).toBeUndefined();
    await w.close();
  });

  it("phases run off the commit line: a phase may await its own session.commit", async () => {
    const holder: { session?: Session } = {};
    const probe = defineTask({
      name: "t.offline",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (task, rt) => {
          const entry = await (holder.session as Session).commit((tx) =>
            tx.appendEntry(task.conversationId, { kind: "from-phase" }),
          );
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "completed", value: entry.id },
          }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([probe]);
    holder.session = w.session;
    const id = await create(w.session, probe, null);
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toMatchObject({ kind: "completed" });
    expect(await entryKinds(w.session)).toEqual(["from-phase"]);
    await w.close();
  });

  it("a phase that throws faults the task with the error", async () => {
    const T = defineTask({
      name: "t.throws",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: () => {
          throw new RangeError("card declined");
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    const task = await taskOf(w.session, id);
    expect(task.state).toEqual({
      status: "terminal",
      outcome: { kind: "faulted", error: { name: "RangeError", message: "card declined" } },
    });
    expect(typeof task.endedAt).toBe("number");
    await w.close();
  });

  it("a phase that returns without a durable change of checkpoint faults the task", async () => {
    const T = defineTask({
      name: "t.lazy",
      version: 1,
      initial: () => ({ phase: "run", n: 1 }),
      phases: {
        run: async (task, rt) => {
          // Writes an entry and a memo but leaves the checkpoint as it was.
          await rt.commit(async (tx) => {
            await tx.appendEntry(task.conversationId, { kind: "noise" });
            return undefined;
          });
          await rt.memo("m", () => 1);
          await rt.commit(() => ({ phase: "run", n: 1 }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    const outcome = outcomeOf(await taskOf(w.session, id)) as {
      kind: string;
      error: { name: string; message: string };
    };
    expect(outcome.kind).toBe("faulted");
    expect(outcome.error.name).toBe("TaskFaulted");
    expect(outcome.error.message).toMatch(
      /phase "run" returned without committing a new checkpoint/,
    );
    await w.close();
  });

  it("a phase may commit a failed outcome", async () => {
    const T = defineTask({
      name: "t.fails",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          await rt.commit(() => ({
            status: "terminal",
            outcome: {
              kind: "failed",
              error: { name: "Declined", message: "no funds", code: "NSF" },
            },
          }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({
      kind: "failed",
      error: { name: "Declined", message: "no funds", code: "NSF" },
    });
    await w.close();
  });

  it("a commit that throws stores none of its writes and the task faults with that error", async () => {
    const T = defineTask({
      name: "t.commit-throws",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (task, rt) => {
          await rt.commit(async (tx) => {
            await tx.appendEntry(task.conversationId, { kind: "half" });
            throw new Error("changed my mind");
          });
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(w.session, id))).toMatchObject({
      kind: "faulted",
      error: { message: "changed my mind" },
    });
    expect(await entryKinds(w.session)).toEqual([]);
    await w.close();
  });

  it("a bad next state is a TypeError naming the field; nothing of that commit is stored", async () => {
    const T = defineTask({
      name: "t.bad-state",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (task, rt) => {
          await rt.commit(async (tx) => {
            await tx.appendEntry(task.conversationId, { kind: "lost" });
            return { phase: "nowhere" };
          });
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    const outcome = outcomeOf(await taskOf(w.session, id)) as {
      error: { name: string; message: string };
    };
    expect(outcome.error.name).toBe("TypeError");
    expect(outcome.error.message).toMatch(
      /checkpoint\.phase "nowhere" is not one of its phases \(run\)/,
    );
    expect(await entryKinds(w.session)).toEqual([]);
    await w.close();
  });

  it("onTerminal writes join the terminal commit, whoever ends the task", async () => {
    const T = defineTask({
      name: "t.settles",
      version: 1,
      initial: (mode: string) => ({ phase: "run", mode }),
      phases: {
        run: async (task, rt) => {
          if (task.checkpoint.mode === "throw") throw new Error("boom");
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
      onTerminal: async (tx, task) => {
        await tx.appendEntry(task.conversationId, {
          kind: `settled:${task.state.status === "terminal" ? task.state.outcome.kind : "?"}`,
          byTaskId: task.id,
        });
      },
    });
    const w = await openTasks([T]);
    const seqs = new Map<string, number>();
    w.session.subscribeCommits((event) => {
      for (const write of event.writes) {
        if (write.type === "entry") seqs.set(write.value.kind, event.seq);
        if (write.type === "task" && write.value.state.status === "terminal")
          seqs.set(`terminal:${write.value.id}`, event.seq);
      }
    });
    const ok = await create(w.session, T, "ok");
    const bad = await create(w.session, T, "throw");
    await w.scheduler.waitForIdle();
    expect(seqs.get("settled:completed")).toBe(seqs.get(`terminal:${ok}`));
    expect(seqs.get("settled:faulted")).toBe(seqs.get(`terminal:${bad}`));
    await w.close();
  });

  it("rt is unusable once its phase returned", async () => {
    const leaked = gate<{ commit: () => Promise<unknown> }>();
    const T = defineTask({
      name: "t.leak",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
          leaked.open({ commit: () => rt.commit(() => ({ phase: "run" })) });
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    const { commit } = await leaked.promise;
    await expect(commit()).rejects.toBeInstanceOf(TaskStateError);
    await w.close();
  });

  it("runs at most `concurrency` phases at once", async () => {
    let running = 0;
    let most = 0;
    const T = defineTask({
      name: "t.slow",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          running += 1;
          most = Math.max(most, running);
          await rt.sleep(5);
          running -= 1;
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T], { scheduler: { concurrency: 3 } });
    const ids: TaskId[] = [];
    for (let i = 0; i < 10; i++) ids.push(await create(w.session, T, null));
    await w.scheduler.waitForIdle();
    expect(most).toBe(3);
    for (const id of ids) expect((await taskOf(w.session, id)).state.status).toBe("terminal");
    await w.close();
  });

  it("a checkpoint naming a phase the definition no longer has faults the task with TaskFaulted", async () => {
    const T = defineTask({
      name: "t.renamed",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: { run: () => undefined },
      abort: () => undefined,
    });
    const w = await openTasks([T], { start: false });
    const id = await create(w.session, T, null);
    await w.session.commit(async (tx) => {
      const task = (await tx.task(id)) as TaskRecord;
      await tx.putTask({ ...task, state: { status: "pending", checkpoint: { phase: "gone" } } });
    });
    await w.scheduler.start();
    await w.scheduler.waitForIdle();
    const outcome = outcomeOf(await taskOf(w.session, id)) as {
      error: { name: string; message: string };
    };
    expect(outcome.error.name).toBe(new TaskFaulted("x").name);
    expect(outcome.error.message).toMatch(/checkpoint phase "gone" is not one of its phases/);
    await w.close();
  });
});
