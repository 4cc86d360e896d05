import type { ConversationId, DocumentId, EntryId, TaskId } from "@durably/core";
import { Prng } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { Child } from "./support/child.js";
import { tempDir } from "./support/temp-dir.js";

const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

for (const fsync of [false, true]) {
  const kills = fsync ? 3 : 5;
  describe(`SIGKILL while committing${fsync ? " (fsync)" : ""}`, () => {
    it(`${kills} kills at seeded random moments: every acknowledged commit is present, none is half present`, async () => {
      const random = new Prng(SEED + (fsync ? 1 : 0));
      const dir = tempDir();
      const acked: { step: number; seq: number; entryId: number }[] = [];
      try {
        for (let round = 0; round < kills; round++) {
          const child = new Child("commit-loop-child.ts", [dir.path, fsync ? "fsync" : "plain"]);
          await child.waitFor((l) => l.startsWith("ready"), "ready");
          const before = child.lines.length;
          // Kill after a random delay once it is committing (at least one ack, so every round makes progress).
          await child.waitFor((l) => l.startsWith("ack"), "an ack");
          await new Promise((resolve) => setTimeout(resolve, 5 + random.next() * 120));
          await child.kill();
          for (const line of child.lines.slice(before)) {
            const [kind, step, seq, entryId] = line.split(" ");
            if (kind === "ack")
              acked.push({ step: Number(step), seq: Number(seq), entryId: Number(entryId) });
          }

          const storage = await openJsonlStorage(dir.path, { fsync });
          try {
            // Every acknowledged commit is there, with the seq it was acknowledged with.
            for (const ack of acked) {
              const found = await storage.entry(ack.entryId as EntryId);
              expect(
                found,
                `seed ${SEED}: acknowledged step ${ack.step} (entry ${ack.entryId}) is missing`,
              ).toBeDefined();
              expect(found?.commitSeq).toBe(ack.seq);
              expect(found?.entry.data).toEqual({ step: ack.step });
            }
            // No commit is half present: entries are steps 1..n exactly once, and the document and task say n.
            const page = await storage.scanEntries(
              { conversationId: 1 as ConversationId, order: "ascending" },
              100_000,
            );
            const steps = page.items.map((e) => (e.data as { step: number }).step);
            const n = steps.length;
            expect(steps, `seed ${SEED}`).toEqual(Array.from({ length: n }, (_, i) => i + 1));
            expect(n).toBeGreaterThanOrEqual(acked[acked.length - 1]?.step ?? 0);
            const last = page.items[n - 1];
            const counter = await storage.document(2 as DocumentId, "current");
            expect(counter?.value).toEqual({ step: n, entryId: last?.id });
            const task = await storage.task(3 as TaskId);
            expect(task?.state).toEqual({
              status: "running",
              checkpoint: { step: n, entryId: last?.id },
            });
            // Seqs and ids only grow.
            const seqs = await Promise.all(
              page.items.map(async (e) => (await storage.entry(e.id))?.commitSeq ?? 0),
            );
            for (let i = 1; i < n; i++) {
              expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
              expect(page.items[i]?.id).toBeGreaterThan(page.items[i - 1]?.id as number);
            }
          } finally {
            await storage.close();
          }
        }
        expect(acked.length).toBeGreaterThan(kills);
        console.info(
          `SIGKILL${fsync ? " (fsync)" : ""}: seed ${SEED}, ${kills} kills, ${acked.length} acknowledged commits verified`,
        );
      } finally {
        dir.remove();
      }
    }, 120_000);
  });
}
