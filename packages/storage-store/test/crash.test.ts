import { join } from "node:path";
import { rmSync } from "node:fs";
import { Prng } from "@durably/contract-tests";
import { describe, expect, it } from "vitest";
import type { ConversationId, EntryRecord } from "@durably/core";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";
import { open } from "./crash/open-child.js";

const SEED = Number(process.env.DURABLY_CRASH_SEED ?? 20240601);
const KILLS = Number(process.env.CRASH_ITERATIONS ?? 6);

interface Ack {
  seq: number;
  id: number;
  step: number;
}

/** Runs the committing child until a seeded random moment, SIGKILLs it, returns the acks it printed. */
async function runAndKill(path: string, childSeed: number, delayMs: number): Promise<Ack[]> {
  const child = spawnTs("./crash/commit-loop.ts", [path, String(childSeed)]);
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  try {
    await waitForLine(child, "ready");
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  } finally {
    await killed(child);
  }
  // A torn last line was never a complete ack: only newline-terminated lines count.
  return out
    .split("\n")
    .slice(0, -1)
    .filter((line) => line.startsWith("ack "))
    .map((line) => {
      const [, seq, id, step] = line.split(" ").map(Number);
      return { seq, id, step } as Ack;
    });
}

describe("StoreStorage on classic-level > crash (SIGKILL while committing)", () => {
  it(`${KILLS} kills at seeded random moments: every acknowledged commit is present, none is half present, seqs and ids only grow`, async () => {
    const dir = tempDir();
    const path = join(dir, "db");
    const random = new Prng(SEED);
    const acked: Ack[] = [];
    let lastSeq = 0;
    try {
      for (let kill = 0; kill < KILLS; kill++) {
        const delay = Math.floor(20 + random.next() * 400);
        const acks = await runAndKill(path, Math.floor(random.next() * 2 ** 31), delay);
        acked.push(...acks);
        const where = `seed ${SEED}, kill ${kill} after ${delay} ms`;

        const storage = await open(path);
        try {
          const entries: EntryRecord[] = [];
          let page = await storage.scanEntries(
            { conversationId: 1 as ConversationId, order: "ascending" },
            500,
          );
          for (;;) {
            entries.push(...page.items);
            if (!page.next) break;
            page = await storage.scanEntries(
              { conversationId: 1 as ConversationId, order: "ascending" },
              500,
              page.next,
            );
          }
          const steps = entries.map((e) => (e.data as { step: number }).step);
          // A prefix survives: steps are exactly 1..n, with no gap and no duplicate.
          expect(steps, where).toEqual(steps.map((_s, i) => i + 1));
          // None half present: the document change of the newest stored commit is there, and no later one.
          const address = { kind: "crash.counter", scope: { kind: "session" as const } };
          const found = await storage.findDocument(address, "current");
          const counter = found && (await storage.document(found.id, "current"));
          expect(counter?.value ?? { step: 0, text: "" }, where).toEqual({
            step: steps.length,
            text: expectedText(steps.length),
          });
          // Every acknowledged commit is present with the seq it was acknowledged with.
          for (const ack of acked) {
            const stored = await storage.entry(ack.id as never);
            expect(stored, `${where}: acknowledged entry ${ack.id} (seq ${ack.seq})`).toBeDefined();
            expect(stored?.commitSeq, `${where}: seq of acknowledged entry ${ack.id}`).toBe(
              ack.seq,
            );
            expect((stored?.entry.data as { step: number }).step).toBe(ack.step);
          }
          // Seqs strictly increase with the steps, across every restart; ids are never reused.
          const seqs = await Promise.all(
            entries.map(async (e) => (await storage.entry(e.id))?.commitSeq ?? 0),
          );
          for (let i = 1; i < seqs.length; i++)
            expect(seqs[i], where).toBeGreaterThan(seqs[i - 1] as number);
          expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
          const newest = seqs.at(-1) ?? 0;
          expect(newest, where).toBeGreaterThanOrEqual(lastSeq);
          lastSeq = newest;
        } finally {
          await storage.close();
        }
      }
      expect(acked.length, "the child acknowledged commits before being killed").toBeGreaterThan(
        KILLS,
      );
      expect(
        acked.every((ack) => ack.seq > 0),
        "every ack carries its batch's seq",
      ).toBe(true);
      console.info(`crash: ${acked.length} acknowledged commits, ${KILLS} SIGKILLs, seed ${SEED}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** The counter document's text after `n` steps. */
function expectedText(n: number): string {
  return Array.from({ length: n }, (_x, i) => `.${i + 1}`).join("");
}
