import { defineTask } from "@durably/core";
import { taskScenario, type TaskRuleGroup } from "./api.js";
import { Held, Leaf, Steps } from "./definitions.js";
import { gateName, openGate } from "./gates.js";
import {
  aborted,
  createTask,
  entryKinds,
  idleScheduler,
  orphaned,
  ownedBy,
  shutDown,
  terminalWithin,
  untilStatus,
} from "./steps.js";

/** Leaf as a newer deploy defines it: same kind, version 2. */
const LeafV2 = defineTask({ ...Leaf, version: 2 });

/** A kind only an absent deploy registers: here it is only a token to create tasks with. */
const Absent = defineTask({
  name: "conformance.absent",
  version: 1,
  initial: () => ({ phase: "run" }),
  phases: { run: () => undefined },
  abort: () => "never here",
});

export const blocked: TaskRuleGroup = {
  rule: "blocked tasks",
  scenarios: [
    taskScenario(
      "abortTask on a task whose kind is not registered ends it orphaned with the reason, running nothing",
      async ({ open, check }) => {
        const first = await open();
        await first.scheduler.stop();
        const { session } = first;
        const id = await createTask(session, Leaf, { fail: false });
        const scheduler = await idleScheduler(session, [Steps]);
        check.same(scheduler.inspect().blocked[0]?.id, id, `task ${id} is reported blocked`);
        check.same(await scheduler.abortTask(id), true, `abortTask(${id}) on a blocked task`);
        const task = await terminalWithin(scheduler, session, id, "the aborted blocked task");
        check.equal(
          task.state,
          orphaned('no task definition registered for kind "conformance.leaf"'),
          `task ${id} final state`,
        );
        check.ok(typeof task.endedAt === "number", `endedAt stamped: ${task.endedAt}`);
        check.same(task.startedAt, undefined, `task ${id} never ran (startedAt unset)`);
        check.equal(scheduler.inspect().tasks, [], "inspect() lists no live task");
        check.same(await scheduler.abortTask(id), false, "a second abortTask reports it terminal");
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "abortTask on a task stored at a newer version than the registered definition ends it orphaned with the reason (a rolling deploy)",
      async ({ open, check }) => {
        const first = await open();
        await first.scheduler.stop();
        const { session } = first;
        const id = await createTask(session, LeafV2, { fail: false });
        const scheduler = await idleScheduler(session, [Leaf]);
        check.equal(
          scheduler.inspect().blocked.map((t) => [t.id, t.status, t.blocked]),
          [
            [
              id,
              "pending",
              "stored at version 2, newer than the registered definition (version 1)",
            ],
          ],
          "inspect().blocked",
        );
        check.same(await scheduler.abortTask(id), true, `abortTask(${id})`);
        const task = await terminalWithin(scheduler, session, id, "the aborted newer-version task");
        check.equal(
          task.state,
          orphaned("stored at version 2, newer than the registered definition (version 1)"),
          `task ${id} final state (version 1's abort handler, which says "leaf ${id} aborted", must not run)`,
        );
        check.same(task.version, 2, `task ${id} keeps the version it was stored at`);
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "an aborted blocked owner waits for its owned tasks to be aborted, then ends orphaned",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const owner = await createTask(session, Absent, {});
        const gate = gateName("child");
        const child = await session.commit((tx) =>
          tx.createTask(Held, { gate }, { ownership: { kind: "task", taskId: owner } }),
        );
        await untilStatus(session, child, "running", `child ${child} runs`);
        check.same(await scheduler.abortTask(owner), true, `abortTask(${owner})`);
        const ended = await terminalWithin(scheduler, session, owner, "the aborted blocked owner");
        const [kid] = await ownedBy(session, owner);
        check.equal(kid?.state, aborted("held aborted"), `child ${child} was aborted first`);
        check.equal(
          ended.state,
          orphaned('no task definition registered for kind "conformance.absent"'),
          `owner ${owner} final state`,
        );
        check.ok(
          (kid?.endedAt as number) <= (ended.endedAt as number),
          `child ended (${kid?.endedAt}) before its owner (${ended.endedAt})`,
        );
        openGate(gate);
        check.equal(await entryKinds(session), [], "no task code of the owner ran");
        await shutDown(scheduler, session);
      },
    ),
  ],
};
