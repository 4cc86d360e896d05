import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Prng } from "@durably/contract-tests";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntryRecord } from "@durably/core";
import { openSqliteStorage } from "../src/index.js";
import { spawnChild } from "./child-process.js";
import { tempDir } from "./helpers.js";

const SEED = Number(process.env.DURABLY_TASK_CRASH_SEED ?? 0x7a5c);
const KILLS = Number(process.env.DURABLY_TASK_CRASH_KILLS ?? 6);
const TASKS = 24;

let dir: ReturnType<typeof tempDir>;
beforeAll(() => void (dir = tempDir("durably-sqlite-task-crash-")));
afterAll(() => dir.cleanup());

describe("crash: SIGKILL while tasks run (intent, memoised effect, outcome)", () => {
  it(`every task ends with exactly one outcome and each memoised effect ran at most once (seed ${SEED}, ${KILLS} kills)`, async () => {
    const path = join(dir.dir, "tasks.sqlite");
    const effectsPath = join(dir.dir, "effects.log");
    const random = new Prng(SEED);
    let killedMidRun = 0;
    for (let round = 0; round < KILLS; round++) {
      const child = spawnChild("tasks-child.ts", [path, effectsPath, String(TASKS)]);
      await child.waitFor(/^ready$/);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random.next() * 25)));
      child.process.kill("SIGKILL");
      const exit = await child.exited;
      if (exit.signal === "SIGKILL") killedMidRun += 1;
      else expect(exit.code, child.stderr()).toBe(0); // it finished before the kill landed
    }
    const last = spawnChild("tasks-child.ts", [path, effectsPath, String(TASKS)]);
    await last.waitFor(/^idle$/, 60_000);
    expect((await last.exited).code, last.stderr()).toBe(0);

    const storage = await openSqliteStorage(path);
    try {
      const tasks = (await storage.scanTasks({ kind: "crash.charge" }, 1000)).items;
      const entries: EntryRecord[] = [];
      let cursor;
      do {
        const page = await storage.scanEntries(
          { conversationId: 1 as never, order: "ascending" },
          500,
          cursor,
        );
        entries.push(...page.items);
        cursor = page.next;
      } while (cursor !== undefined);
      const effects = existsSync(effectsPath)
        ? readFileSync(effectsPath, "utf8")
            .split("\n")
            .filter((line) => line !== "")
        : [];
      expect(tasks).toHaveLength(TASKS);
      const kinds: Record<string, number> = {};
      for (const task of tasks) {
        const where = `task ${task.id} (${JSON.stringify(task.state)}, memos ${JSON.stringify(task.memos)})`;
        expect(task.state.status, where).toBe("terminal");
        const outcome = (task.state as { outcome: { kind: string } }).outcome;
        kinds[outcome.kind] = (kinds[outcome.kind] ?? 0) + 1;
        const mine = entries.filter((e) => e.byTaskId === task.id);
        expect(
          mine.filter((e) => e.kind === "intent"),
          where,
        ).toHaveLength(1);
        const outcomes = mine.filter((e) => e.kind === "outcome");
        expect(outcomes, where).toHaveLength(1);
        const ran = effects.filter((line) => line === String(task.id)).length;
        expect(ran, `${where}: the effect ran ${ran} times`).toBeLessThanOrEqual(1);
        if (outcome.kind === "completed") {
          expect(outcomes[0]?.data, where).toBe("completed");
          expect(task.memos, where).toEqual({
            charge: { status: "done", value: `receipt ${task.id}` },
          });
          expect(ran, `${where}: completed, so its effect ran once`).toBe(1);
        } else {
          expect(outcome.kind, where).toBe("failed");
          expect(outcomes[0]?.data, where).toBe("interrupted");
          expect(task.memos, where).toEqual({ charge: { status: "started" } });
        }
        expect(typeof task.startedAt === "number" && typeof task.endedAt === "number", where).toBe(
          true,
        );
      }

      console.log(
        `task crash: ${killedMidRun}/${KILLS} kills landed mid-run; outcomes ${JSON.stringify(kinds)}`,
      );
      expect(killedMidRun).toBeGreaterThan(0);
    } finally {
      await storage.close();
    }
  }, 120_000);
});
