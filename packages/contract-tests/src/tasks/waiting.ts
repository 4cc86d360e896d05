import { taskScenario, type TaskRuleGroup } from "./api.js";
import { createTask, Fanout, stored } from "./definitions.js";

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
        check.equal(
          (await stored(session, id)).state,
          {
            status: "terminal",
            outcome: { kind: "completed", value: ["completed", "failed", "completed"] },
          },
          `fanout ${id} saw every child settled`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
    taskScenario(
      "failFast resumes on the first failure while other children still run",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const id = await createTask(session, Fanout, {
          fails: [false, true],
          policy: "failFast",
          holdMs: 100,
        });
        await scheduler.waitForIdle();
        const state = (await stored(session, id)).state;
        check.equal(
          state,
          {
            status: "terminal",
            outcome: { kind: "completed", value: ["live", "failed"] },
          },
          `fanout ${id} resumed before its slow child ended, then held completing until it did`,
        );
        await scheduler.stop();
        await session.close();
      },
    ),
  ],
};
