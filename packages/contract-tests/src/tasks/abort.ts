import { taskScenario, type TaskRuleGroup } from "./api.js";
import { createTask, Fanout, stored, until } from "./definitions.js";

export const abortAndCompleting: TaskRuleGroup = {
  rule: "abort and completing",
  scenarios: [
    taskScenario(
      "abortTask aborts owned children first, then the owner's handler runs and it ends aborted",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const id = await createTask(session, Fanout, {
          fails: [false, false],
          policy: "allSettled",
          holdMs: 60_000,
        });
        await until(
          `fanout ${id} is waiting`,
          async () => (await stored(session, id)).state.status === "waiting",
        );
        check.same(await scheduler.abortTask(id), true, `abortTask(${id}) on a live task`);
        await scheduler.waitForIdle();
        const owner = await stored(session, id);
        check.equal(
          owner.state,
          { status: "terminal", outcome: { kind: "aborted", reason: "fanout aborted" } },
          `owner ${id} final state`,
        );
        const children = (await session.read.scanTasks({ owner: id, order: "ascending" }, 10))
          .items;
        check.same(children.length, 2, "two children");
        for (const child of children) {
          check.same(child.abortRequested, true, `child ${child.id} abortRequested`);
          check.equal(
            child.state,
            {
              status: "terminal",
              outcome: { kind: "aborted", reason: `leaf ${child.id} aborted` },
            },
            `child ${child.id} final state`,
          );
          check.ok(
            (child.endedAt as number) <= (owner.endedAt as number),
            `child ${child.id} ended (${child.endedAt}) before its owner (${owner.endedAt})`,
          );
        }
        await scheduler.stop();
        await session.close();
      },
    ),
  ],
};
