import { join } from "node:path";
import { Prng } from "@durably/contract-tests";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EntryRecord, Seq } from "@durably/core";
import { openSqliteStorage, type SqliteStorage } from "../src/index.js";
import { spawnChild } from "./child-process.js";
import { COUNTER_DOC, CONVERSATION, TASK } from "./crash/workload.js";
import { tempDir } from "./helpers.js";

const SEED = Number(process.env.DURABLY_CRASH_SEED ?? 0x5eed);
const KILLS = Number(process.env.DURABLY_CRASH_KILLS ?? 6);

let dir: ReturnType<typeof tempDir>;
beforeAll(() => void (dir = tempDir("durably-sqlite-crash-")));
afterAll(() => dir.cleanup());

type Ack = { seq: number; n: number; entryId: number };

async function allEntries(
  storage: SqliteStorage,
): Promise<{ entry: EntryRecord; commitSeq: number }[]> {
  const found: { entry: EntryRecord; commitSeq: number }[] = [];
  let cursor;
  do {
    const page = await storage.scanEntries(
      { conversationId: CONVERSATION, order: "ascending" },
      200,
      cursor,
    );
    for (const entry of page.items) {
      const stored = await storage.entry(entry.id);
      found.push({ entry, commitSeq: stored?.commitSeq as number });
    }
    cursor = page.next;
  } while (cursor !== undefined);
  return found;
}

describe("crash: SIGKILL while committing", () => {
  it(`every acknowledged commit survives and none is half present (seed ${SEED}, ${KILLS} kills)`, async () => {
    const path = join(dir.dir, "crash.sqlite");
    const random = new Prng(SEED);
    const acked: Ack[] = [];
    let lastSeq = 0;
    for (let round = 0; round < KILLS; round++) {
      const child = spawnChild("commit-loop.ts", [path]);
      await child.waitFor(/^ready /);
      // Kill at a seeded random moment after the child started committing.
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.floor(random.next() * 180)));
      child.process.kill("SIGKILL");
      const exit = await child.exited;
      expect(
        exit.signal,
        `round ${round}: child should die by SIGKILL; stderr: ${child.stderr()}`,
      ).toBe("SIGKILL");
      for (const line of child.lines) {
        const m = /^ack (\d+) (\d+) (\d+)$/.exec(line);
        if (m) acked.push({ seq: Number(m[1]), n: Number(m[2]), entryId: Number(m[3]) });
      }

      const storage = await openSqliteStorage(path);
      try {
        const entries = await allEntries(storage);
        const stored = new Map(entries.map((e) => [e.entry.id as number, e]));
        // Every acknowledged commit is present, with its seq.
        for (const ack of acked) {
          const e = stored.get(ack.entryId);
          expect(
            e,
            `round ${round}: acknowledged commit seq ${ack.seq} (step ${ack.n}) is missing`,
          ).toBeDefined();
          expect(e?.commitSeq).toBe(ack.seq);
          expect(e?.entry.data).toEqual({ n: ack.n });
        }
        // What survived is a prefix: steps 1..N, seqs strictly increasing.
        entries.forEach((e, i) => {
          expect((e.entry.data as { n: number }).n).toBe(i + 1);
          if (i > 0)
            expect(e.commitSeq).toBeGreaterThan(
              (entries[i - 1] as { commitSeq: number }).commitSeq,
            );
        });
        // No commit is half present: at each stored step's seq the document says that step,
        // and the current document and task agree with the newest stored step.
        // (Each historical read replays the delta tail, so check the newest steps and a seeded sample.)
        const checked = entries.filter((_, i) => i >= entries.length - 20 || random.next() < 0.05);
        for (const e of checked) {
          const doc = await storage.document(COUNTER_DOC, e.commitSeq as Seq);
          expect(doc?.value, `document at seq ${e.commitSeq}`).toEqual({
            count: (e.entry.data as { n: number }).n,
          });
        }
        const newest = entries.length;
        expect((await storage.document(COUNTER_DOC, "current"))?.value).toEqual({ count: newest });
        if (newest > 0)
          expect((await storage.task(TASK))?.state).toEqual({
            status: "running",
            checkpoint: { n: newest },
          });
        const top = entries[entries.length - 1]?.commitSeq ?? 0;
        expect(top).toBeGreaterThanOrEqual(lastSeq);
        lastSeq = top;
        // Ids of committed records are never minted again.
        const minted = await storage.mintId();
        expect(stored.has(minted)).toBe(false);
        expect(minted).toBeGreaterThan(Math.max(0, ...stored.keys()));
      } finally {
        await storage.close();
      }
    }
    console.info(
      `sqlite crash test: ${acked.length} acknowledged commits over ${KILLS} SIGKILLs, seed ${SEED}`,
    );
    expect(
      acked.length,
      "the child should have acknowledged commits before being killed",
    ).toBeGreaterThan(KILLS);
  }, 120_000);
});
