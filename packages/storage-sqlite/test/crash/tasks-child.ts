// A child process for the task crash test: runs multi-phase tasks (intent, effect, outcome)
// over SQLite; the parent kills it with SIGKILL at seeded random moments and reopens.
import { appendFileSync } from "node:fs";
import {
  defineTask,
  MemoInterrupted,
  ROOT_CONVERSATION_ID,
  Scheduler,
  Session,
  type TaskId,
} from "@durably/core";
import { openSqliteStorage } from "../../src/index.js";

const [path, effectsPath, countText] = process.argv.slice(2) as [string, string, string];
const count = Number(countText);

/** A small random pause, so kills land inside phases, between commits and around the effect. */
const jitter = (): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 3));

export const Charge = defineTask({
  name: "crash.charge",
  version: 1,
  initial: (input: { n: number }) => ({ phase: "intent", n: input.n }),
  phases: {
    intent: async (task, rt) => {
      await jitter();
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, { kind: "intent", byTaskId: task.id });
        return { phase: "effect", n: task.checkpoint.n };
      });
    },
    effect: async (task, rt) => {
      await jitter();
      try {
        // The effect: a line in a real file outside the database, which the parent counts.
        await rt.memo("charge", async () => {
          await jitter();
          appendFileSync(effectsPath, `${task.id}\n`);
          await jitter();
          return `receipt ${task.id}`;
        });
      } catch (error) {
        if (!(error instanceof MemoInterrupted)) throw error;
        // Killed between the intent marker and the result: the effect may have happened. Say so, once.
        await rt.commit(async (tx) => {
          await tx.appendEntry(task.conversationId, {
            kind: "outcome",
            byTaskId: task.id,
            data: "interrupted",
          });
          return {
            status: "terminal",
            outcome: {
              kind: "failed",
              error: { name: error.name, message: error.message, code: error.code },
            },
          };
        });
        return;
      }
      await rt.commit(() => ({ phase: "outcome", n: task.checkpoint.n }));
    },
    outcome: async (task, rt) => {
      await jitter();
      await rt.commit(async (tx) => {
        await tx.appendEntry(task.conversationId, {
          kind: "outcome",
          byTaskId: task.id,
          data: "completed",
        });
        return { status: "terminal", outcome: { kind: "completed", value: task.checkpoint.n } };
      });
    },
  },
  abort: () => undefined,
});

const session = await Session.open(await openSqliteStorage(path));
const existing = await session.read.scanTasks({ kind: Charge.name }, 1);
if (existing.items.length === 0)
  await session.commit(async (tx) => {
    const ids: TaskId[] = [];
    for (let n = 0; n < count; n++)
      ids.push(
        await tx.createTask(
          Charge,
          { n },
          { ownership: { kind: "ownerless" }, conversationId: ROOT_CONVERSATION_ID },
        ),
      );
    return ids;
  });
const scheduler = new Scheduler(session, [Charge], { concurrency: 4 });
await scheduler.start();
process.stdout.write("ready\n");
await scheduler.waitForIdle();
await scheduler.stop();
await session.close();
process.stdout.write("idle\n");
