import type { Session, TaskId, TaskRecord } from "@durably/core";
import { taskScenario, type TaskRuleGroup } from "./api.js";
import type { Check } from "../storage/support.js";
import { Awaiter, createTask, Spawner, stored, until, Waiter, ownedBy } from "./definitions.js";
import { gateName, openGate } from "./gates.js";

const isWaiting = (session: Session, id: TaskId) => async () =>
  (await stored(session, id)).state.status === "waiting";

/** The task ended `faulted` with a TaskFaulted that says its wait closes a cycle. */
function checkCycleFault(check: Check, task: TaskRecord, what: string): void {
  const state = task.state;
  check.ok(
    state.status === "terminal" &&
      state.outcome.kind === "faulted" &&
      state.outcome.error.name === "TaskFaulted" &&
      /cycle/.test(state.outcome.error.message) &&
      state.outcome.error.message.includes(`task ${task.id}`),
    `${what}: task ${task.id} must end faulted with a TaskFaulted naming it and the cycle; it is ${JSON.stringify(state)}`,
  );
}

export const cycles: TaskRuleGroup = {
  rule: "wait cycles",
  scenarios: [
    taskScenario(
      "two tasks that wait on each other: the wait that closes the cycle faults its waiter, and the other resumes",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const [ga, gb] = [gateName("a"), gateName("b")];
        const a = await createTask(session, Waiter, { gate: ga });
        const b = await createTask(session, Waiter, { gate: gb });
        openGate(ga, [b]);
        await until(`task ${a} waits on task ${b}`, isWaiting(session, a));
        openGate(gb, [a]); // b's wait would close the cycle a -> b -> a
        await scheduler.waitForIdle();
        checkCycleFault(check, await stored(session, b), "the closing waiter");
        check.equal(
          (await stored(session, a)).state,
          { status: "terminal", outcome: { kind: "completed", value: ["faulted"] } },
          `task ${a}, whose wait was first, resumed once task ${b} faulted`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
    taskScenario(
      "a task that waits on its own owner faults (the owner cannot end before it), and the owner then ends",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const [gOwner, gChild] = [gateName("owner"), gateName("child")];
        const owner = await createTask(session, Spawner, {
          children: [{ kind: "waiter", gate: gChild }],
          then: "hold",
          gate: gOwner,
        });
        await until(`owner ${owner} spawned its child`, async () => {
          return (await ownedBy(session, owner)).length === 1;
        });
        const child = (await ownedBy(session, owner))[0]?.id as TaskId;
        openGate(gChild, [owner]);
        await until(`child ${child} ended`, async () => {
          return (await stored(session, child)).state.status === "terminal";
        });
        checkCycleFault(check, await stored(session, child), "the child waiting on its owner");
        openGate(gOwner);
        await scheduler.waitForIdle();
        check.equal(
          (await stored(session, owner)).state,
          { status: "terminal", outcome: { kind: "completed", value: "spawner done" } },
          `owner ${owner} ended with its own outcome`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
    taskScenario(
      "a wait that reaches its waiter through another task's owned work faults the waiter that closes it",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const [ga, gOwner, gChild] = [gateName("a"), gateName("owner"), gateName("child")];
        const a = await createTask(session, Waiter, { gate: ga });
        const owner = await createTask(session, Spawner, {
          children: [{ kind: "waiter", gate: gChild }],
          then: "hold",
          gate: gOwner,
        });
        await until(`owner ${owner} spawned its child`, async () => {
          return (await ownedBy(session, owner)).length === 1;
        });
        const child = (await ownedBy(session, owner))[0]?.id as TaskId;
        openGate(gChild, [a]); // owner -> child -> a: no cycle yet
        await until(`child ${child} waits on task ${a}`, isWaiting(session, child));
        openGate(ga, [owner]); // a -> owner -> (owns) child -> a
        await until(`task ${a} ended`, async () => {
          return (await stored(session, a)).state.status === "terminal";
        });
        checkCycleFault(check, await stored(session, a), "the waiter closing the cycle");
        openGate(gOwner);
        await scheduler.waitForIdle();
        check.equal(
          (await stored(session, child)).state,
          { status: "terminal", outcome: { kind: "completed", value: ["faulted"] } },
          `child ${child} resumed once task ${a} faulted`,
        );
        check.equal(
          (await stored(session, owner)).state,
          { status: "terminal", outcome: { kind: "completed", value: "spawner done" } },
          `owner ${owner} ended once its child did`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
    taskScenario(
      "rt.waitForTask on a task that waits on the caller rejects with TaskFaulted instead of waiting forever",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const [ga, gb] = [gateName("a"), gateName("b")];
        const a = await createTask(session, Waiter, { gate: ga });
        const b = await createTask(session, Awaiter, { gate: gb });
        openGate(ga, [b]);
        await until(`task ${a} waits on task ${b}`, isWaiting(session, a));
        openGate(gb, a); // b's phase awaits a in memory: a waits on b
        await scheduler.waitForIdle();
        checkCycleFault(check, await stored(session, b), "the task whose in-memory wait closes it");
        check.equal(
          (await stored(session, a)).state,
          { status: "terminal", outcome: { kind: "completed", value: ["faulted"] } },
          `task ${a} resumed once task ${b} faulted`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
    taskScenario(
      "a durable wait on a task whose phase awaits the waiter in memory faults the waiter; the phase then goes on",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const [ga, gb] = [gateName("a"), gateName("b")];
        const a = await createTask(session, Waiter, { gate: ga });
        const b = await createTask(session, Awaiter, { gate: gb });
        openGate(gb, a); // b's phase awaits a in memory (a holds at its gate, running)
        await until(`task ${b}'s phase awaits task ${a} (inspect().waitingOn)`, () => {
          const seen = scheduler.inspect().tasks.find((t) => t.id === b);
          return JSON.stringify(seen?.waitingOn) === JSON.stringify([a]);
        });
        openGate(ga, [b]); // a's wait on b closes a -> b -> a
        await scheduler.waitForIdle();
        checkCycleFault(check, await stored(session, a), "the durable waiter closing it");
        check.equal(
          (await stored(session, b)).state,
          { status: "terminal", outcome: { kind: "completed", value: "faulted" } },
          `task ${b}'s rt.waitForTask resolved with task ${a} faulted`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
  ],
};
