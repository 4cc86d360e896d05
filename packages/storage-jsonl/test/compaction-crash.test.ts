import { cpSync } from "node:fs";
import { Prng } from "@durably/contract-tests";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectOneWholeGeneration,
  prepareCompactionStorage,
  runCompactionChild,
} from "./support/compaction-crash.js";
import { tempDir } from "./support/temp-dir.js";

// Real child processes compacting while they commit, SIGKILLed before or after one of the
// compaction's own file operations (each write, flush, rename and removal). The points are a
// seeded sample (COMPACTION_CRASH_SEED replays one); DURABLY_COMPACTION_SOAK=1 runs every point in
// both positions.

const SEED = Number(process.env.COMPACTION_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SOAK = process.env.DURABLY_COMPACTION_SOAK === "1";

for (const fsync of [false, true]) {
  describe(`SIGKILL inside a compaction${fsync ? " (fsync)" : ""}`, () => {
    let template: { path: string; remove(): void };
    let points: string[];
    beforeAll(async () => {
      template = tempDir();
      await prepareCompactionStorage(template.path, fsync);
      const dir = tempDir();
      try {
        cpSync(template.path, dir.path, { recursive: true });
        const listed = await runCompactionChild(dir.path, fsync, "-1:before");
        expect(listed.lines, listed.stderr).toContain("done");
        points = listed.lines.filter((l) => l.startsWith("op ")).map((l) => l.slice(3));
      } finally {
        dir.remove();
      }
    }, 60_000);
    afterAll(() => template.remove());

    it("the compaction's kill points include every step of the switch", () => {
      const labels = points.map((p) => p.replace(/^[0-9]+ /, ""));
      for (const op of [
        "mkdir gen-1",
        "flush gen-1/snapshot.jsonl",
        "write CURRENT.tmp",
        "rename CURRENT.tmp",
        "remove main.jsonl",
      ])
        expect(labels, `seed ${SEED}`).toContain(op);
    });

    const samples = fsync ? 4 : 6;
    it(
      `${SOAK ? "every point" : `${samples} seeded points`}: the reopen finds the old or the new generation, every acknowledged commit, never a mix`,
      async () => {
        const seeded = new Prng(SEED + (fsync ? 1 : 0));
        const random = () => seeded.next();
        const chosen: { index: number; when: "before" | "after" }[] = [];
        if (SOAK)
          for (let index = 0; index < points.length; index++)
            chosen.push({ index, when: "before" }, { index, when: "after" });
        else {
          // Always the switch itself, then a random sample of the rest.
          const rename = points.findIndex((p) => p.endsWith("rename CURRENT.tmp"));
          chosen.push({ index: rename, when: random() < 0.5 ? "before" : "after" });
          while (chosen.length < samples)
            chosen.push({
              index: Math.floor(random() * points.length),
              when: random() < 0.5 ? "before" : "after",
            });
        }
        const generations = new Set<number>();
        for (const { index, when } of chosen) {
          const dir = tempDir();
          try {
            cpSync(template.path, dir.path, { recursive: true });
            const run = await runCompactionChild(dir.path, fsync, `${index}:${when}`);
            const where = `seed ${SEED}: SIGKILL ${when} ${points[index]}`;
            // Operations shift a little with the commits the catch-up copies: a point past the end is a run without a kill.
            if (run.signal !== "SIGKILL")
              expect(run.lines, `${where}: ${run.stderr}`).toContain("done");
            const found = await expectOneWholeGeneration(dir.path, fsync, run, where);
            generations.add(found.generation);
          } finally {
            dir.remove();
          }
        }
        // The sample is small: only the soak insists on landing on both sides of the switch.
        if (SOAK) expect([...generations].sort(), `seed ${SEED}`).toEqual([0, 1]);
      },
      SOAK ? 3_600_000 : 300_000,
    );
  });
}
