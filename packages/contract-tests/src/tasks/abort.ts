import type { TaskId } from "@durably/core";
import { taskScenario, type TaskRuleGroup } from "./api.js";
import { createTask, entryKinds, Fanout, ownedBy, Spawner, stored, until } from "./definitions.js";
import { gateName, openGate } from "./gates.js";

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
    taskScenario(
      "abortTask on a completing task aborts its owned work and keeps its held outcome; its abort handler does not run; a second abort reports it terminal",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const gates = [gateName("one"), gateName("two")];
        const owner = await createTask(session, Spawner, {
          children: gates.map((gate) => ({ kind: "held" as const, gate })),
          then: "complete",
        });
        await until(`owner ${owner} is completing`, async () => {
          return (await stored(session, owner)).state.status === "completing";
        });
        check.same(await scheduler.abortTask(owner), true, `abortTask(${owner}) while completing`);
        await scheduler.waitForIdle();
        check.equal(
          (await stored(session, owner)).state,
          { status: "terminal", outcome: { kind: "completed", value: "spawner done" } },
          `owner ${owner} kept the outcome it held`,
        );
        for (const child of await ownedBy(session, owner))
          check.equal(
            child.state,
            { status: "terminal", outcome: { kind: "aborted", reason: "held aborted" } },
            `owned task ${child.id} was aborted`,
          );
        check.equal(await entryKinds(session), [], "the owner's abort handler never ran");
        check.same(
          await scheduler.abortTask(owner),
          false,
          "a second abortTask reports it terminal",
        );
        for (const gate of gates) openGate(gate);
        await scheduler.stop();
        await session.close();
      },
    ),
    taskScenario(
      "inspect() shows an abort-marked owner waiting on its live owned tasks, then it ends aborted",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const [hold, childGate, childAbort] = [gateName("o"), gateName("c"), gateName("ca")];
        const owner = await createTask(session, Spawner, {
          children: [{ kind: "held", gate: childGate, abortGate: childAbort }],
          then: "hold",
          gate: hold,
        });
        await until(`owner ${owner} spawned its child`, async () => {
          return (await ownedBy(session, owner)).length === 1;
        });
        const child = (await ownedBy(session, owner))[0]?.id as TaskId;
        check.same(await scheduler.abortTask(owner), true, `abortTask(${owner})`);
        // Its phase sees the abort and gives its slot back (pending) while the child drains.
        await until(`inspect() shows owner ${owner} parked, waiting on child ${child}`, () => {
          const seen = scheduler.inspect().tasks.find((t) => t.id === owner);
          return seen?.active === false && seen.status === "pending";
        });
        const seen = scheduler.inspect().tasks.find((t) => t.id === owner);
        check.equal(
          seen && {
            abortRequested: seen.abortRequested,
            waitingOn: seen.waitingOn,
            blocked: seen.blocked,
          },
          { abortRequested: true, waitingOn: [child], blocked: undefined },
          `inspect() of owner ${owner} while its child ${child} drains`,
        );
        openGate(childAbort);
        await scheduler.waitForIdle();
        check.equal(
          (await stored(session, owner)).state,
          { status: "terminal", outcome: { kind: "aborted", reason: "spawner aborted" } },
          `owner ${owner} final state`,
        );
        check.equal(await entryKinds(session), ["abort-handler"], "its abort handler ran once");
        openGate(hold);
        openGate(childGate);
        await scheduler.stop();
        await session.close();
      },
    ),
  ],
};
