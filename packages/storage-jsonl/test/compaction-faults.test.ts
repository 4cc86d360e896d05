import { cpSync, readdirSync } from "node:fs";
import { StoragePoisoned, type DocumentId, type Seq, type TaskId } from "@durably/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { FaultyFileSystem, type FaultMode } from "./support/faulty-file-system.js";
import { commitAll, w } from "./support/records.js";
import { tempDir } from "./support/temp-dir.js";

// Every file operation of a compaction, failed in turn (before it runs, after it ran, or half
// written), through the FileSystem port: the storage either goes on in the old generation (a fault
// before the switch) or is poisoned (a fault in the switch itself), and a reopen finds one whole
// generation holding every acknowledged commit.

let prepared: { path: string; remove(): void };
let operations: string[];

beforeAll(async () => {
  prepared = tempDir();
  const storage = await openJsonlStorage(prepared.path, { compaction: false });
  await commitAll(storage, [
    w.conversation(1),
    w.createDoc(2, 1, { text: "c0" }),
    w.createDoc(3, 1, { text: "r0" }, "rewindable"),
    w.task(4, 1, { status: "running", checkpoint: 0 }),
  ]);
  for (let step = 1; step <= 5; step++)
    await commitAll(storage, [
      w.entry(10 + step, 1, `step ${step}`),
      w.setText(2, `c${step}`),
      w.setText(3, `r${step}`),
      w.task(4, 1, { status: "running", checkpoint: step }),
    ]);
  await storage.close();
  // A clean compaction of a copy, to list its operations.
  const copy = tempDir();
  try {
    cpSync(prepared.path, copy.path, { recursive: true });
    const fs = new FaultyFileSystem();
    const storage = await openJsonlStorage(copy.path, { fs, compaction: false });
    fs.count();
    await storage.compact();
    operations = [...fs.log];
    fs.stop();
    await storage.close();
  } finally {
    copy.remove();
  }
});
afterAll(() => prepared.remove());

/** Everything the prepared storage holds (plus step 6 when it was acknowledged) is there. */
async function expectWhole(path: string, step6: boolean): Promise<number> {
  const storage = await openJsonlStorage(path, { compaction: false });
  try {
    const page = await storage.scanEntries({ conversationId: 1 as never, order: "ascending" }, 100);
    const steps = step6 ? 6 : 5;
    expect(page.items.map((e) => e.data)).toEqual(
      Array.from({ length: steps }, (_, i) => `step ${i + 1}`),
    );
    expect((await storage.document(2 as DocumentId, "current"))?.value).toEqual({
      text: `c${steps}`,
    });
    for (let step = 1; step <= 5; step++)
      expect((await storage.document(3 as DocumentId, (step + 1) as Seq))?.value).toEqual({
        text: `r${step}`,
      });
    expect((await storage.task(4 as TaskId))?.state).toEqual({
      status: "running",
      checkpoint: steps,
    });
    const generation = storage.generation;
    // One generation only, whichever it is: the other was removed (or never existed).
    const files = readdirSync(path).filter((n) => n !== "recovered" && n !== "LOCK");
    expect(files.sort()).toEqual(
      generation === 0 ? expect.arrayContaining(["main.jsonl"]) : ["CURRENT", `gen-${generation}`],
    );
    expect(files.some((n) => n.startsWith("gen-") && n !== `gen-${generation}`)).toBe(false);
    // And it compacts again.
    await storage.compact();
    return generation;
  } finally {
    await storage.close();
  }
}

describe("a fault at each file operation of a compaction", () => {
  it("lists the compaction's operations (the switch is the rename of CURRENT.tmp)", () => {
    expect(operations.length).toBeGreaterThan(10);
    expect(operations).toContain("rename CURRENT.tmp");
  });

  for (const mode of ["before", "after", "half"] as FaultMode[])
    it(`${mode}: before the switch the storage goes on unpoisoned; a reopen finds one whole generation with every acknowledged commit`, async () => {
      const switchAt = operations.indexOf("rename CURRENT.tmp");
      const outcomes = new Map<string, number>();
      for (let at = 0; at < operations.length; at++) {
        const dir = tempDir();
        try {
          cpSync(prepared.path, dir.path, { recursive: true });
          const fs = new FaultyFileSystem();
          const storage = await openJsonlStorage(dir.path, { fs, compaction: false });
          fs.count({ at, mode });
          const failed = await storage.compact().then(
            () => undefined,
            (error: unknown) => error,
          );
          fs.stop();
          const where = `${mode} ${operations[at]} (operation ${at})`;
          const step6 = await commitAll(storage, [
            w.entry(16, 1, "step 6"),
            w.setText(2, "c6"),
            w.task(4, 1, { status: "running", checkpoint: 6 }),
          ]).then(
            () => true,
            (error: unknown) => {
              expect(error, where).toBeInstanceOf(StoragePoisoned);
              return false;
            },
          );
          if (at < switchAt)
            expect(step6, `${where}: a fault before the switch poisoned`).toBe(true);
          if (failed !== undefined && at < switchAt) expect(storage.generation, where).toBe(0);
          await storage.close().catch(() => undefined);
          const generation = await expectWhole(dir.path, step6);
          outcomes.set(
            `generation ${generation}`,
            (outcomes.get(`generation ${generation}`) ?? 0) + 1,
          );
        } finally {
          dir.remove();
        }
      }
      // Faults landed on both sides of the switch.
      expect([...outcomes.keys()].sort()).toEqual(["generation 0", "generation 1"]);
    });
});
