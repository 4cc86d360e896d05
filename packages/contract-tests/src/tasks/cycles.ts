import type { TaskRecord } from "@durably/core";
import { taskScenario, type TaskRuleGroup } from "./api.js";
import type { Check } from "../storage/support.js";
import { Awaiter, Spawner, Waiter } from "./definitions.js";
import { gateName, openGate } from "./gates.js";
import {
  completed,
  createTask,
  shutDown,
  spawnedChild,
  stored,
  until,
  untilStatus,
  checkState,
} from "./steps.js";

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
        await untilStatus(session, a, "waiting", `task ${a} waits on task ${b}`);
        openGate(gb, [a]); // b's wait would close the cycle a -> b -> a
        await scheduler.waitForIdle();
        checkCycleFault(check, await stored(session, b), "the closing waiter");
        await checkState(
          check,
          session,
          a,
          completed(["faulted"]),
          `task ${a}, whose wait was first, resumed once task ${b} faulted`,
        );
        await shutDown(scheduler, session);
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
        const child = await spawnedChild(session, owner);
        openGate(gChild, [owner]);
        await untilStatus(session, child, "terminal", `child ${child} ended`);
        checkCycleFault(check, await stored(session, child), "the child waiting on its owner");
        openGate(gOwner);
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          owner,
          completed("spawner done"),
          `owner ${owner} ended with its own outcome`,
        );
        await shutDown(scheduler, session);
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
        const child = await spawnedChild(session, owner);
        openGate(gChild, [a]); // owner -> child -> a: no cycle yet
        await untilStatus(session, child, "waiting", `child ${child} waits on task ${a}`);
        openGate(ga, [owner]); // a -> owner -> (owns) child -> a
        await untilStatus(session, a, "terminal", `task ${a} ended`);
        checkCycleFault(check, await stored(session, a), "the waiter closing the cycle");
        openGate(gOwner);
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          child,
          completed(["faulted"]),
          `child ${child} resumed once task ${a} faulted`,
        );
        await checkState(
          check,
          session,
          owner,
          completed("spawner done"),
          `owner ${owner} ended once its child did`,
        );
        await shutDown(scheduler, session);
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
        await untilStatus(session, a, "waiting", `task ${a} waits on task ${b}`);
        openGate(gb, a); // b's phase awaits a in memory: a waits on b
        await scheduler.waitForIdle();
        checkCycleFault(check, await stored(session, b), "the task whose in-memory wait closes it");
        await checkState(
          check,
          session,
          a,
          completed(["faulted"]),
          `task ${a} resumed once task ${b} faulted`,
        );
        await shutDown(scheduler, session);
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
        await checkState(
          check,
          session,
          b,
          completed("faulted"),
          `task ${b}'s rt.waitForTask resolved with task ${a} faulted`,
        );
        await shutDown(scheduler, session);
      },
    ),
  ],
};
