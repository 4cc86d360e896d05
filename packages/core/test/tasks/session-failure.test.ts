import { describe, expect, it } from "vitest";
import {
  defineTask,
  SessionFailed,
  StoragePoisoned,
  type TaskId,
  type TaskRecord,
} from "../../src/index.js";
import { create, gate, openTasks, ROOT, type TaskWorld } from "./support.js";

/** Rejects naming `what` when `promise` does not settle within `ms`: a wait that hangs fails the test instead. */
function within<T>(promise: Promise<T>, what: string, ms = 2_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );

/** The next storage.commit call rejects with StoragePoisoned (an uncertain write failure) and fails the session. */
async function poisonNextCommit(w: TaskWorld): Promise<StoragePoisoned> {
  const poisoned = new StoragePoisoned("injected: fsync failed with EIO", {
    cause: new Error("EIO"),
  });
  w.storage.nextCommit = () => Promise.reject(poisoned);
  await w.session.commit((tx) => tx.appendEntry(ROOT, { kind: "lost" })).catch(() => undefined);
  expect(w.session.failed).toBeInstanceOf(SessionFailed);
  return poisoned;
}

function expectFailedWith(error: unknown, cause: StoragePoisoned): void {
  expect(error).toBeInstanceOf(SessionFailed);
  expect((error as SessionFailed).cause).toBe(cause);
}

/** A task whose phase holds until `open()`, then completes. */
function heldTask() {
  const held = gate();
  const Held = defineTask({
    name: "t.failure-held",
    version: 1,
    initial: () => ({ phase: "run" }),
    phases: {
      run: async (_task, rt) => {
        await held.promise;
        await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
      },
    },
    abort: () => undefined,
  });
  return { Held, open: () => held.open() };
}

describe("tasks > session failure: no wait outlives a failed session", () => {
  it("scheduler.waitForTask pending when the session fails rejects at once with SessionFailed carrying the storage error", async () => {
    const { Held, open } = heldTask();
    const w = await openTasks([Held]);
    const id = await create(w.session, Held, null);
    const waiting = rejection(w.scheduler.waitForTask(id));
    const poisoned = await poisonNextCommit(w);
    expectFailedWith(await within(waiting, `waitForTask(${id})`), poisoned);
    open();
    await within(w.close(), "close");
  });

  it("scheduler.waitForTask called after the session failed rejects with SessionFailed", async () => {
    const { Held, open } = heldTask();
    const w = await openTasks([Held]);
    const id = await create(w.session, Held, null);
    const poisoned = await poisonNextCommit(w);
    expectFailedWith(
      await within(rejection(w.scheduler.waitForTask(id)), `waitForTask(${id})`),
      poisoned,
    );
    open();
    await within(w.close(), "close");
  });

  it("scheduler.waitForIdle and a phase's rt.waitForTask reject with SessionFailed when the session fails", async () => {
    const { Held, open } = heldTask();
    let awaited: unknown;
    const inner = gate<TaskId>();
    const Awaiter = defineTask({
      name: "t.failure-awaiter",
      version: 1,
      initial: () => ({ phase: "run" }),
      phases: {
        run: async (_task, rt) => {
          const id = await inner.promise;
          awaited = await rt.waitForTask(id).then(
            (task: TaskRecord) => task,
            (error: unknown) => error,
          );
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([Held, Awaiter]);
    const heldId = await create(w.session, Held, null);
    await create(w.session, Awaiter, null);
    inner.open(heldId);
    const idle = rejection(w.scheduler.waitForIdle());
    await new Promise((resolve) => setTimeout(resolve, 20));
    const poisoned = await poisonNextCommit(w);
    expectFailedWith(await within(idle, "waitForIdle"), poisoned);
    await within(
      (async () => {
        while (awaited === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      })(),
      "rt.waitForTask in the awaiting phase",
    );
    expectFailedWith(awaited, poisoned);
    open();
    await within(w.close(), "close");
  });
});
