import { taskScenario, type TaskRuleGroup } from "./api.js";
import { Fanout, Nest, Spawner } from "./definitions.js";
import { gateName, openGate } from "./gates.js";
import {
  aborted,
  completed,
  completingOwner,
  createTask,
  entryKinds,
  ownedBy,
  shutDown,
  spawnedChild,
  stored,
  until,
  untilStatus,
  checkState,
} from "./steps.js";

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
        await untilStatus(session, id, "waiting", `fanout ${id} is waiting`);
        check.same(await scheduler.abortTask(id), true, `abortTask(${id}) on a live task`);
        await scheduler.waitForIdle();
        const owner = await stored(session, id);
        check.equal(owner.state, aborted("fanout aborted"), `owner ${id} final state`);
        const children = (await session.read.scanTasks({ owner: id, order: "ascending" }, 10))
          .items;
        check.same(children.length, 2, "two children");
        for (const child of children) {
          check.same(child.abortRequested, true, `child ${child.id} abortRequested`);
          check.equal(
            child.state,
            aborted(`leaf ${child.id} aborted`),
            `child ${child.id} final state`,
          );
          check.ok(
            (child.endedAt as number) <= (owner.endedAt as number),
            `child ${child.id} ended (${child.endedAt}) before its owner (${owner.endedAt})`,
          );
        }
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "abortTask marks the task and every live task it owns, at all depths, in its one commit: when it resolves, child and grandchild are stored abort-marked; they end aborted, deepest first",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const gate = gateName("nest");
        const top = await createTask(session, Nest, { depth: 2, gate });
        const child = await spawnedChild(session, top);
        const grandchild = await spawnedChild(session, child);
        await untilStatus(session, grandchild, "running", `grandchild ${grandchild} runs`);
        const markedAt = new Map<number, number>();
        session.subscribeCommits((event) => {
          for (const write of event.writes)
            if (
              write.type === "task" &&
              write.value.abortRequested &&
              !markedAt.has(write.value.id)
            )
              markedAt.set(write.value.id, event.seq);
        });
        check.same(await scheduler.abortTask(top), true, `abortTask(${top})`);
        for (const id of [child, grandchild])
          check.same(
            (await stored(session, id)).abortRequested,
            true,
            `owned task ${id} is stored abort-marked when abortTask(${top}) resolves`,
          );
        const seqs = [top, child, grandchild].map((id) => markedAt.get(id));
        check.ok(seqs[0] !== undefined, `the abort mark of task ${top} was seen committed`);
        check.equal(
          seqs,
          [seqs[0], seqs[0], seqs[0]],
          `the commit seq of each abort mark (task ${top}, ${child}, ${grandchild})`,
        );
        await scheduler.waitForIdle();
        const ended: number[] = [];
        for (const id of [grandchild, child, top]) {
          const task = await stored(session, id);
          check.equal(task.state, aborted(`nest ${id} aborted`), `task ${id} final state`);
          ended.push(task.endedAt as number);
        }
        check.equal(
          ended,
          [...ended].sort((a, b) => a - b),
          "endedAt of grandchild, child, task",
        );
        openGate(gate);
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "abortTask on a completing task aborts its owned work and keeps its held outcome; its abort handler does not run; a second abort reports it terminal",
      async ({ open, check }) => {
        const { session, scheduler } = await open();
        const gates = [gateName("one"), gateName("two")];
        const owner = await completingOwner(session, gates);
        check.same(await scheduler.abortTask(owner), true, `abortTask(${owner}) while completing`);
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          owner,
          completed("spawner done"),
          `owner ${owner} kept the outcome it held`,
        );
        for (const child of await ownedBy(session, owner))
          check.equal(child.state, aborted("held aborted"), `owned task ${child.id} was aborted`);
        check.equal(await entryKinds(session), [], "the owner's abort handler never ran");
        check.same(
          await scheduler.abortTask(owner),
          false,
          "a second abortTask reports it terminal",
        );
        for (const gate of gates) openGate(gate);
        await shutDown(scheduler, session);
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
        const child = await spawnedChild(session, owner);
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
        await checkState(
          check,
          session,
          owner,
          aborted("spawner aborted"),
          `owner ${owner} final state`,
        );
        check.equal(await entryKinds(session), ["abort-handler"], "its abort handler ran once");
        openGate(hold);
        openGate(childGate);
        await shutDown(scheduler, session);
      },
    ),
  ],
};
