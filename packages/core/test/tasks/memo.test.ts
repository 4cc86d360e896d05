import { describe, expect, it } from "vitest";
import { defineTask, MemoInterrupted, type TaskRecord } from "../../src/index.js";
import { create, openTasks, outcomeOf, taskOf } from "./support.js";

const effects: string[] = [];
let dieAfterEffect = false;

/** charge: a memoised effect, then a commit; `dieAfterEffect` makes the phase hang (the process "dies"). */
function charger(guard: "atMostOnce" | "atLeastOnce") {
  return defineTask({
    name: `t.charge.${guard}`,
    version: 1,
    initial: () => ({ phase: "charge" }),
    phases: {
      charge: async (task, rt) => {
        let receipt: string;
        try {
          receipt = await rt.memo(
            "charge",
            () => {
              effects.push(`charge ${task.id}`);
              return `receipt-${task.id}`;
            },
            { guard },
          );
        } catch (error) {
          if (!(error instanceof MemoInterrupted)) throw error;
          await rt.commit(() => ({
            status: "terminal",
            outcome: {
              kind: "failed",
              error: { name: error.name, message: error.message, code: error.code },
            },
          }));
          return;
        }
        if (dieAfterEffect) return new Promise<void>(() => undefined);
        await rt.commit(() => ({
          status: "terminal",
          outcome: { kind: "completed", value: receipt },
        }));
      },
    },
    abort: () => undefined,
  });
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 2));
}

describe("tasks > memos", () => {
  it("a memo's result is committed under memos[key] and reused by a rerun after a crash (the effect does not run again)", async () => {
    effects.length = 0;
    dieAfterEffect = true;
    const T = charger("atMostOnce");
    const first = await openTasks([T]);
    const id = await create(first.session, T, null);
    await until(async () =>
      (JSON.stringify((await taskOf(first.session, id)).memos) ?? "").includes("done"),
    );
    expect((await taskOf(first.session, id)).memos).toEqual({
      charge: { status: "done", value: `receipt-${id}` },
    });
    dieAfterEffect = false;
    const second = await first.restart();
    await second.scheduler.waitForIdle();
    expect(outcomeOf(await taskOf(second.session, id))).toEqual({
      kind: "completed",
      value: `receipt-${id}`,
    });
    expect(effects).toEqual([`charge ${id}`]);
    await second.close();
  });

  it("atMostOnce: an intent marker without a result means the effect may have run; the rerun gets MemoInterrupted, never a second effect", async () => {
    effects.length = 0;
    dieAfterEffect = false;
    const T = charger("atMostOnce");
    const first = await openTasks([T], { start: false });
    const id = await create(first.session, T, null);
    // The state a crash between the marker commit and the result commit leaves behind:
    await first.session.commit(async (tx) => {
      const t = (await tx.task(id)) as TaskRecord;
      await tx.putTask({
        ...t,
        state: { status: "running", checkpoint: { phase: "charge" } },
        memos: { charge: { status: "started" } },
      });
    });
    const second = await first.restart();
    await second.scheduler.waitForIdle();
    expect(effects).toEqual([]);
    expect(outcomeOf(await taskOf(second.session, id))).toMatchObject({
      kind: "failed",
      error: { name: "MemoInterrupted", code: "MEMO_INTERRUPTED" },
    });
    await second.close();
  });

  it("atMostOnce stores the intent marker before the effect runs", async () => {
    effects.length = 0;
    const seen: unknown[] = [];
    const T = defineTask({
      name: "t.marker",
      version: 1,
      initial: () => ({ phase: "go" }),
      phases: {
        go: async (task, rt) => {
          await rt.memo("k", async () => {
            seen.push((await rt.getTask(task.id))?.memos);
            return 5;
          });
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    const id = await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(seen).toEqual([{ k: { status: "started" } }]);
    expect((await taskOf(w.session, id)).memos).toEqual({ k: { status: "done", value: 5 } });
    await w.close();
  });

  it("atLeastOnce: no marker; after a crash mid-effect the effect runs again until its result is committed", async () => {
    effects.length = 0;
    const T = charger("atLeastOnce");
    const first = await openTasks([T], { start: false });
    const id = await create(first.session, T, null);
    await first.session.commit(async (tx) => {
      const t = (await tx.task(id)) as TaskRecord;
      await tx.putTask({ ...t, state: { status: "running", checkpoint: { phase: "charge" } } });
    });
    const second = await first.restart();
    await second.scheduler.waitForIdle();
    expect(effects).toEqual([`charge ${id}`]);
    expect(outcomeOf(await taskOf(second.session, id))).toEqual({
      kind: "completed",
      value: `receipt-${id}`,
    });
    await second.close();
  });

  it("a memo result must be JSON (TypeError naming the key), and the key must be a non-empty string", async () => {
    const errors: string[] = [];
    const T = defineTask({
      name: "t.memo-bad",
      version: 1,
      initial: () => ({ phase: "go" }),
      phases: {
        go: async (_task, rt) => {
          await rt.memo("", () => 1).catch((e: Error) => errors.push(e.message));
          await rt.memo("nan", () => Number.NaN).catch((e: Error) => errors.push(e.message));
          await rt.commit(() => ({ status: "terminal", outcome: { kind: "completed" } }));
        },
      },
      abort: () => undefined,
    });
    const w = await openTasks([T]);
    await create(w.session, T, null);
    await w.scheduler.waitForIdle();
    expect(errors).toEqual([
      "rt.memo: key must be a non-empty string",
      'memos["nan"]: NaN is not JSON',
    ]);
    await w.close();
  });
});
