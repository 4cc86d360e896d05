import { defineTask, Scheduler, Session, type TaskId, type TaskRecord } from "@durably/core";
import { taskScenario, type TaskRuleGroup } from "./api.js";
import { DEFINITIONS, Fanout, Held, Leaf, Steps } from "./definitions.js";
import { gateName, openGate } from "./gates.js";
import {
  completed,
  completingOwner,
  createTask,
  entryKinds,
  idleScheduler,
  ownedBy,
  restarted,
  shutDown,
  stored,
  until,
  checkState,
} from "./steps.js";

/** Steps whose effect phase no longer holds: what the restarted process runs. */
const StepsNoHold = defineTask({
  ...Steps,
  phases: {
    ...Steps.phases,
    effect: (task, rt) =>
      (Steps.phases.effect as NonNullable<(typeof Steps.phases)["effect"]>)(
        { ...task, checkpoint: { ...task.checkpoint, holdMs: 0 } },
        rt,
      ),
  },
});

export const recovery: TaskRuleGroup = {
  rule: "recovery",
  scenarios: [
    taskScenario(
      "after a reopen (or a new scheduler), a task cut short in a phase returns to pending with checkpoint, memos and abort mark kept, and resumes from its checkpoint",
      async ({ open, reopen, check }) => {
        const first = await open();
        const id = await createTask(first.session, Steps, { label: "again", holdMs: 60_000 });
        await until(`task ${id} holds in its effect phase`, async () =>
          (JSON.stringify((await stored(first.session, id)).memos) ?? "").includes("done"),
        );
        await first.scheduler.stop(); // the phase is cut short: the task stays running
        const session = await restarted(first.session, reopen);
        const checkpoint = { phase: "effect", label: "again", holdMs: 60_000 };
        await checkState(
          check,
          session,
          id,
          { status: "running", checkpoint },
          `task ${id} as stored at reopen`,
        );
        const writes: TaskRecord[] = [];
        session.subscribeCommits((event) => {
          for (const write of event.writes) if (write.type === "task") writes.push(write.value);
        });
        const scheduler = new Scheduler(session, [StepsNoHold, Leaf, Fanout]);
        await scheduler.start();
        check.equal(
          writes[0]?.state,
          { status: "pending", checkpoint },
          `task ${id} recovered to pending first`,
        );
        check.equal(
          writes[0]?.memos,
          { effect: { status: "done", value: `effect of ${id}` } },
          "memos kept by recovery",
        );
        await scheduler.waitForIdle();
        const task = await stored(session, id);
        check.equal(task.state, completed("again"), `task ${id} final state`);
        check.equal(
          await entryKinds(session),
          ["intent", "outcome"],
          "the intent phase ran once, the outcome once",
        );
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "a task whose kind no scheduler registers survives reopen pending and reported blocked",
      async ({ open, reopen, check }) => {
        const first = await open();
        await first.scheduler.stop();
        const id = await createTask(first.session, Leaf, { fail: false });
        const blocked = await idleScheduler(first.session, [Steps]);
        check.equal(
          blocked.inspect().blocked.map((t) => [t.id, t.status, t.blocked]),
          [[id, "pending", 'no task definition registered for kind "conformance.leaf"']],
          "inspect().blocked",
        );
        await blocked.stop();
        await first.session.close();
        if (!reopen) return;
        const session = await Session.open(await reopen());
        check.equal((await stored(session, id)).state.status, "pending", `task ${id} after reopen`);
        const scheduler = await idleScheduler(session, [Leaf]);
        await checkState(check, session, id, completed(id), `task ${id} once registered`);
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "a task completing whose owned work ended before the restart finalizes with its held outcome",
      async ({ open, reopen, check }) => {
        const first = await open();
        const gate = gateName("child");
        const owner = await completingOwner(first.session, [gate]);
        await first.scheduler.stop();
        // What a crash right after the child's terminal commit leaves: a process
        // that cannot finalize the owner (its kind is not registered there) runs
        // the child to its end.
        const partial = new Scheduler(first.session, [Held]);
        await partial.start();
        openGate(gate, "ended");
        await partial.waitForIdle();
        await partial.stop();
        const session = await restarted(first.session, reopen);
        const [child] = await ownedBy(session, owner);
        check.equal(child?.state, completed("ended"), "the owned task ended before the restart");
        check.same(
          (await stored(session, owner)).state.status,
          "completing",
          `owner ${owner} at the restart`,
        );
        const scheduler = new Scheduler(session, DEFINITIONS);
        await scheduler.start();
        await scheduler.waitForIdle();
        const ended = await stored(session, owner);
        check.equal(
          ended.state,
          completed("spawner done"),
          `owner ${owner} finalized with the outcome it held`,
        );
        check.ok(
          (ended.endedAt as number) >= (child?.endedAt as number),
          `owner ended (${ended.endedAt}) after its child (${child?.endedAt})`,
        );
        await shutDown(scheduler, session);
      },
    ),
    taskScenario(
      "a task completing whose owned work is still live at the restart holds until that work ends",
      async ({ open, reopen, check }) => {
        const first = await open();
        const gate = gateName("child");
        const owner = await completingOwner(first.session, [gate]);
        await first.scheduler.stop(); // the child's phase is cut short: it stays running
        const session = await restarted(first.session, reopen);
        const scheduler = new Scheduler(session, DEFINITIONS);
        await scheduler.start();
        const [child] = await ownedBy(session, owner);
        await until(`child ${child?.id} runs again`, () =>
          scheduler.inspect().tasks.some((t) => t.id === child?.id && t.active),
        );
        check.same(
          (await stored(session, owner)).state.status,
          "completing",
          `owner ${owner} while its child runs`,
        );
        openGate(gate, "ended late");
        await scheduler.waitForIdle();
        await checkState(
          check,
          session,
          child?.id as TaskId,
          completed("ended late"),
          `child ${child?.id} final state`,
        );
        await checkState(
          check,
          session,
          owner,
          completed("spawner done"),
          `owner ${owner} finalized once its child ended`,
        );
        await shutDown(scheduler, session);
      },
    ),
  ],
};
