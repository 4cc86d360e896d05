import { taskScenario, type TaskRuleGroup } from "./api.js";
import { Leaf, Scratch, Steps } from "./definitions.js";
import {
  checkState,
  completed,
  createTask,
  entryKinds,
  shutDown,
  stored,
  storedStatuses,
} from "./steps.js";

export const lifecycle: TaskRuleGroup = {
  rule: "lifecycle",
  scenarios: [
    taskScenario(
      "a multi-phase task runs pending -> running -> terminal, each phase's writes stored with its checkpoint, task documents retired",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const statuses = storedStatuses(session);
        const id = await createTask(session, Steps, { label: "one" });
        await scheduler.waitForIdle();
        const task = await stored(session, id);
        check.equal(task.state, completed("one"), `task ${id} final state`);
        check.equal(
          statuses,
          ["pending", "running", "running", "running", "running", "running", "terminal"],
          "task states stored, in order (create, reserve, intent, memo x2, effect, outcome)",
        );
        check.equal(
          task.memos,
          { effect: { status: "done", value: `effect of ${id}` } },
          "memo stored under memos[key]",
        );
        check.ok(
          typeof task.startedAt === "number" && typeof task.endedAt === "number",
          `startedAt/endedAt stamped: ${task.startedAt}/${task.endedAt}`,
        );
        check.equal(
          await entryKinds(session),
          ["intent", "outcome"],
          "entries written by the phases",
        );
        check.equal(
          await session.snapshot(Scratch, id),
          undefined,
          "the task document retired with the terminal commit",
        );
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "a phase that throws faults the task; a failed outcome is stored as committed",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const failed = await createTask(session, Leaf, { fail: true });
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          failed,
          {
            status: "terminal",
            outcome: { kind: "failed", error: { name: "LeafFailed", message: `leaf ${failed}` } },
          },
          `task ${failed} failed outcome`,
        );
        const bad = await createTask(session, Leaf, { fail: false, holdMs: -1 });
        await scheduler.waitForIdle();
        const state = (await stored(session, bad)).state;
        check.ok(
          state.status === "terminal" &&
            state.outcome.kind === "faulted" &&
            state.outcome.error.name === "TypeError",
          `task ${bad}, whose phase threw a TypeError, is faulted with it: ${JSON.stringify(state)}`,
        );
        await shutDown(scheduler, session);
      },
    ),
  ],
};
