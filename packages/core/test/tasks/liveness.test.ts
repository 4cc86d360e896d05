import { describe, expect, it } from "vitest";
import {
  defineTask,
  TaskFaulted,
  type Json,
  type TaskId,
  type TaskRecord,
  type TaskState,
} from "../../src/index.js";
import { faultWaitCycleIn } from "../../src/tasks/wait-graph.js";
import { Quick } from "./definitions.js";
import { create, gate, openTasks, outcomeOf, ROOT, taskOf } from "./support.js";

describe("tasks > liveness: nothing waits on what waits on it", () => {
  it("rt.waitForTask on the task itself rejects with TaskFaulted instead of waiting forever", async () => {
    let caught: unknown;
    const T = defineTask({
      name: "t.self-await",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (task, rt) => {
          caught = await rt.waitForTask(task.id).catch((error: unknown) => error);
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(caught).toBeInstanceOf(TaskFaulted);
    expect((caught as Error).message).toContain(
      `task ${id} ("t.self-await"): rt.waitForTask on itself`,
    );
    expect(outcomeOf(await taskOf(w.session, id))).toEqual({ kind: "completed" });
    await w.close();
  });

  it("two waits that close a cycle stored in one storage call: the one stored last is faulted, the other resumes", async () => {
    const peers = gate<Record<string, number>>();
    const Peer = defineTask({
      name: "t.peer",
      version: 1,
      initial: () => ({ phase: "wait", peer: 0 }),
      phases: {
        wait: async (task, rt) => {
          const peer = (await peers.promise)[String(task.id)] as TaskId;
          await rt.commit(() => ({
            status: "waiting",
            checkpoint: { phase: "done", peer },
            on: [peer],
            policy: "allSettled",
          }));
        },
        done: async (task, rt) => {
          const [outcome] = await rt.outcomes([task.checkpoint.peer as TaskId]);
          await rt.commit(() => ({
            status: "terminal",
            outcome: { kind: "completed", value: outcome?.kind ?? "live" },
          }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([Peer]);
    const waitSeqs = new Map<number, number>();
    w.session.subscribeCommits((event) => {
      for (const write of event.writes)
        if (write.type === "task" && write.value.state.status === "waiting")
          waitSeqs.set(write.value.id, event.seq);
    });
    const a = await create(w.session, Peer, null);
    const b = await create(w.session, Peer, null);
    await expect
      .poll(async () => [
        (await taskOf(w.session, a)).state.status,
        (await taskOf(w.session, b)).state.status,
      ])
      .toEqual(["running", "running"]);
    // Keep storage busy so both wait commits queue and go in one storage call.
    w.storage.commitDelayMs = 40;
    const busy = w.session.commit((tx) => tx.appendEntry(ROOT, { kind: "busy" }));
    peers.open({ [a]: b, [b]: a });
    await busy;
    w.storage.commitDelayMs = 0;
    await w.scheduler.waitForIdle();
    const [seqA, seqB] = [waitSeqs.get(a) as number, waitSeqs.get(b) as number];
    const groups: number[][] = [];
    let at = 0;
    for (const count of w.storage.commitCalls) {
      groups.push(w.storage.seqs.slice(at, at + count));
      at += count;
    }
    expect(groups.find((g) => g.includes(seqA))).toContain(seqB); // the race this test is about
    const [first, last] = seqA < seqB ? [a, b] : [b, a];
    const faulted = await taskOf(w.session, last);
    expect(faulted.state).toMatchObject({
      status: "terminal",
      outcome: { kind: "faulted", error: { name: "TaskFaulted" } },
    });
    expect(JSON.stringify(faulted.state)).toContain(
      `task ${last} waits on task ${first}, task ${first} waits on task ${last}`,
    );
    expect(outcomeOf(await taskOf(w.session, first))).toEqual({
      kind: "completed",
      value: "faulted",
    });
    await w.close();
  });

  it("a wait cycle stored by an older version is broken at start: one waiter is faulted, once", async () => {
    const Stuck = defineTask({
      name: "t.stuck",
      version: 1,
      initial: () => ({ phase: "done" }),
      phases: {
        done: async (_task, rt) => {
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const first = await openTasks([Stuck], { start: false });
    const [a, b] = await first.session.commit(async (tx) => {
      const options = { ownership: { kind: "ownerless" as const }, conversationId: ROOT };
      return [await tx.createTask(Stuck, null, options), await tx.createTask(Stuck, null, options)];
    });
    await first.session.commit(async (tx) => {
      const [ta, tb] = [(await tx.task(a)) as TaskRecord, (await tx.task(b)) as TaskRecord];
      const waiting = (on: TaskId): TaskState => ({
        status: "waiting",
        checkpoint: { phase: "done" },
        on: [on],
        policy: "allSettled",
      });
      await tx.putTask({ ...ta, state: waiting(b) });
      await tx.putTask({ ...tb, state: waiting(a) });
    });
    const w = await first.restart();
    await w.scheduler.waitForIdle();
    const states = [await taskOf(w.session, a), await taskOf(w.session, b)].map(
      (t) => (outcomeOf(t) as { kind: string } | undefined)?.kind,
    );
    expect(states.sort()).toEqual(["completed", "faulted"]);
    await w.close();
  });
});

describe("tasks > liveness: a wait cycle under an aborting owner", () => {
  it("is not faulted: its unmarked waiters are aborted with their owner's abort", async () => {
    const Stuck = defineTask({
      name: "t.stuck-owned",
      version: 1,
      initial: () => ({ phase: "done" }),
      phases: {
        done: async (_task, rt) => {
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => "stopped",
    });
    const first = await openTasks([Stuck], { start: false });
    // As an owner's abort leaves them between its commit and the scheduler's marks:
    // the owner marked, its two waiters (each on the other) not yet.
    const [owner, a, b] = await first.session.commit(async (tx) => {
      const root = { ownership: { kind: "ownerless" as const }, conversationId: ROOT };
      const o = await tx.createTask(Stuck, null, root);
      const owned = { ownership: { kind: "task" as const, taskId: o }, conversationId: ROOT };
      return [o, await tx.createTask(Stuck, null, owned), await tx.createTask(Stuck, null, owned)];
    });
    await first.session.commit(async (tx) => {
      const [to, ta, tb] = await Promise.all([owner, a, b].map(async (id) => (await tx.task(id))!));
      const waiting = (on: TaskId): TaskState => ({
        status: "waiting",
        checkpoint: { phase: "done" },
        on: [on],
        policy: "allSettled",
      });
      await tx.putTask({ ...to!, abortRequested: true });
      await tx.putTask({ ...ta!, state: waiting(b) });
      await tx.putTask({ ...tb!, state: waiting(a) });
    });
    // The scheduler's fault for a cycle it found before its marks landed writes nothing.
    for (const id of [a, b])
      expect(
        await first.session.commit((tx) =>
          faultWaitCycleIn(
            tx,
            id,
            Stuck,
            () => [],
            () => 1,
          ),
        ),
      ).toBeNull();
    expect((await taskOf(first.session, a)).state.status).toBe("waiting");
    const w = await first.restart();
    await w.scheduler.waitForIdle();
    for (const id of [a, b, owner])
      expect(await taskOf(w.session, id)).toMatchObject({
        abortRequested: true,
        state: { status: "terminal", outcome: { kind: "aborted" } },
      });
    await w.close();
  });
});

describe("tasks > beforeTerminal", () => {
  it("reads before the terminal commit writes, and onTerminal gets what it returned, whoever ends the task", async () => {
    const seen: { id: number; read: Json | undefined; outcome: string }[] = [];
    const T = defineTask({
      name: "t.before-terminal",
      version: 1,
      initial: (input: { hold: boolean }) => ({ phase: "run", hold: input.hold }),
      phases: {
        run: async (task, rt) => {
          if (task.checkpoint.hold) await rt.sleep(60_000); // until aborted
          await rt.commit(async (tx) => {
            await tx.appendEntry(task.conversationId, { kind: "written first" }); // a table write
            return { status: "terminal", outcome: { kind: "completed" } };
          });
        },
      },
      abort: () => "stopped",
      // A table read: it would throw ReadAfterWrite after the commit's writes.
      beforeTerminal: async (tx, task) => (await tx.task(task.id))?.state.status ?? null,
      onTerminal: (_tx, task, read) => {
        const state = task.state as { outcome: { kind: string } };
        seen.push({ id: task.id, read: read as Json, outcome: state.outcome.kind });
      },
    });
    const w = await openTasks([T]);
    const done = await create(w.session, T, { hold: false });
    await w.scheduler.waitForIdle();
    const aborted = await create(w.session, T, { hold: true });
    await expect.poll(async () => (await taskOf(w.session, aborted)).state.status).toBe("running");
    await w.scheduler.abortTask(aborted);
    await w.scheduler.waitForIdle();
    expect(seen).toEqual([
      { id: done, read: "running", outcome: "completed" },
      { id: aborted, read: "running", outcome: "aborted" },
    ]);
    expect(w.errors).toEqual([]);
    await w.close();
  });

  it("defineTask refuses a beforeTerminal that is not a function", () => {
    expect(() =>
      defineTask({
        ...Quick,
        name: "t.bad-before",
        beforeTerminal: "read" as never,
      }),
    ).toThrow(/defineTask "t.bad-before": beforeTerminal must be a function/);
  });
});
