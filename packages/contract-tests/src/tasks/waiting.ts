import type { TaskRecord } from "@durably/core";
import { taskScenario, type TaskRuleGroup } from "./api.js";
import { Fanout, Held, Leaf, Waiter } from "./definitions.js";
import { gateName, openGate } from "./gates.js";
import {
  aborted,
  completed,
  createTask,
  entryKinds,
  shutDown,
  stored,
  storedStatuses,
  terminalWithin,
  untilStatus,
  checkState,
} from "./steps.js";

export const waiting: TaskRuleGroup = {
  rule: "waiting",
  scenarios: [
    taskScenario(
      "allSettled resumes the waiting task once every child is terminal",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const id = await createTask(session, Fanout, {
          fails: [false, true, false],
          policy: "allSettled",
        });
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          id,
          completed(["completed", "failed", "completed"]),
          `fanout ${id} saw every child settled`,
        );
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "failFast resumes on the first failure while other children still run",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        // The slow child holds at a gate, not for a time: it is live until the fanout has resumed.
        const gate = gateName("slow child");
        const id = await createTask(session, Fanout, {
          fails: [false, true],
          policy: "failFast",
          gate,
        });
        const outcome = { kind: "completed" as const, value: ["live", "failed"] };
        await untilStatus(session, id, "completing", `fanout ${id} resumed and holds completing`);
        await checkState(
          check,
          session,
          id,
          { status: "completing", outcome },
          `fanout ${id} resumed on the failure while its slow child still ran, then held completing`,
        );
        openGate(gate);
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          id,
          { status: "terminal", outcome },
          `fanout ${id} ended with its held outcome once its slow child did`,
        );
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "a task may wait on tasks it does not own, one of them already terminal, and resumes once the live one ends",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const done = await createTask(session, Leaf, { fail: false });
        await scheduler.waitForIdle();
        const gate = gateName("live");
        const live = await createTask(session, Held, { gate });
        const waiter = await createTask(session, Waiter, { on: [done, live] });
        await untilStatus(session, waiter, "waiting", `task ${waiter} waits`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        await checkState(
          check,
          session,
          waiter,
          {
            status: "waiting",
            checkpoint: {
              phase: "report",
              on: [done, live],
              gate: null,
              policy: "allSettled",
              awaited: [done, live],
            },
            on: [done, live],
            policy: "allSettled",
          },
          `task ${waiter} still waits while task ${live} runs`,
        );
        openGate(gate, "released");
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          waiter,
          completed(["completed", "completed"]),
          `task ${waiter} resumed once task ${live} ended`,
        );
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "a waiter aborted while it waits on a task it does not own ends at once and leaves that task running",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const gate = gateName("other");
        const other = await createTask(session, Held, { gate });
        const waiter = await createTask(session, Waiter, { on: [other] });
        await untilStatus(session, waiter, "waiting", `task ${waiter} waits on task ${other}`);
        check.same(await scheduler.abortTask(waiter), true, `abortTask(${waiter})`);
        const ended = await terminalWithin(scheduler, session, waiter, "the aborted waiter");
        check.equal(ended.state, aborted("waiter aborted"), `task ${waiter} final state`);
        const left: TaskRecord = await stored(session, other);
        check.ok(
          left.state.status === "running" && !left.abortRequested,
          `task ${other}, not owned by the waiter, runs on unmarked: ${JSON.stringify(left)}`,
        );
        openGate(gate, "on its own");
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          other,
          completed("on its own"),
          `task ${other} final state`,
        );
        check.equal(await entryKinds(session), ["abort-handler"], "the waiter's handler ran once");
        await shutDown(scheduler, session);
      },
    ),
    taskScenario("a wait on an empty list resumes on the next pass", async ({ open, check }) => {
      const { session, scheduler } = await open();
      const statuses = storedStatuses(session);
      const id = await createTask(session, Waiter, { on: [] });
      await scheduler.waitForIdle();
      await checkState(check, session, id, completed([]), `task ${id} final state`);
      check.equal(
        statuses,
        ["pending", "running", "waiting", "running", "terminal"],
        `task ${id}'s stored states (create, reserve, wait on [], resume, report)`,
      );
      await shutDown(scheduler, session);
    }),
  ],
};
