import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { DocumentId, EntryId, Seq, TaskId } from "@durably/core";
import { expect } from "vitest";
import { openJsonlStorage } from "../../src/index.js";
import { commitAll, w } from "./records.js";

const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("../crash/compaction-child.ts", import.meta.url));

/** Steps committed before the child starts (entries `step 1..5`), and filler entries in conversation 9. */
export const PREPARED_STEPS = 5;
export const FILLER = 400;

const running = (n: number) => ({ status: "running" as const, checkpoint: n });

/**
 * The storage the child compacts: conversation 1 with steps 1..5 (entry
 * `1000 + n`, current-only document 2 = `c<n>` by bases, rewindable
 * document 3 = `r<n>` by deltas, task 4 checkpoint n), and filler entries
 * in conversation 9 so the compaction has something to copy while commits
 * go on.
 */
export async function prepareCompactionStorage(path: string, fsync: boolean): Promise<void> {
  const storage = await openJsonlStorage(path, { fsync, compaction: false });
  await commitAll(storage, [
    w.conversation(1),
    w.conversation(9),
    w.createDoc(2, 1, { text: "c0" }),
    w.createDoc(3, 1, { text: "r0" }, "rewindable"),
    w.task(4, 1, running(0)),
  ]);
  for (let i = 0; i < FILLER; i += 100)
    await commitAll(
      storage,
      Array.from({ length: 100 }, (_, j) => w.entry(5000 + i + j, 9, "filler ".repeat(20))),
    );
  for (let n = 1; n <= PREPARED_STEPS; n++)
    await commitAll(storage, [
      w.entry(1000 + n, 1, `step ${n}`),
      w.base(2, { text: `c${n}` }),
      w.setText(3, `r${n}`),
      w.task(4, 1, running(n)),
    ]);
  await storage.close();
}

export interface ChildRun {
  lines: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** Acknowledged steps with their seqs. */
  acks: { step: number; seq: number }[];
}

/** Runs the compaction child to its end (or its SIGKILL), under `wrapper` (strace and its options) when given. */
export function runCompactionChild(
  path: string,
  fsync: boolean,
  point: string,
  wrapper: string[] = [],
): Promise<ChildRun> {
  const node = [process.execPath, "--conditions=@durably/source", "--import", "tsx", CHILD];
  const args = [...node, path, fsync ? "fsync" : "plain", point];
  const [command, ...rest] = wrapper.length > 0 ? [...wrapper, "--", ...args] : args;
  const child = spawn(command as string, rest, {
    cwd: PACKAGE_DIR,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      const lines = out.split("\n").filter((l) => l !== "");
      const acks = lines
        .filter((l) => l.startsWith("ack "))
        .map((l) => {
          const [, step, seq] = l.split(" ");
          return { step: Number(step), seq: Number(seq) };
        });
      resolve({ lines, code, signal, stderr, acks });
    }),
  );
}

/**
 * Reopens after the child and checks the rules: every acknowledged step is
 * there with its seq, the steps are 1..m with no gap and no double, every
 * record of one step agrees with the others (never a mix of generations),
 * history of the rewindable document reads back at every acknowledged seq,
 * and only one generation is left. Then it compacts again. Returns the
 * generation found and m.
 */
export async function expectOneWholeGeneration(
  path: string,
  fsync: boolean,
  run: ChildRun,
  where: string,
): Promise<{ generation: number; steps: number }> {
  const storage = await openJsonlStorage(path, { fsync, compaction: false });
  try {
    const page = await storage.scanEntries(
      { conversationId: 1 as never, order: "ascending" },
      10_000,
    );
    const m = page.items.length;
    expect(
      page.items.map((e) => e.data),
      where,
    ).toEqual(Array.from({ length: m }, (_, i) => `step ${i + 1}`));
    const last = run.acks[run.acks.length - 1]?.step ?? PREPARED_STEPS;
    expect(m, `${where}: acknowledged step ${last} is missing`).toBeGreaterThanOrEqual(last);
    for (const ack of run.acks) {
      const entry = await storage.entry((1000 + ack.step) as EntryId);
      expect(entry?.commitSeq, `${where}: step ${ack.step}`).toBe(ack.seq);
      expect(
        (await storage.document(3 as DocumentId, ack.seq as Seq))?.value,
        `${where}: r at seq ${ack.seq}`,
      ).toEqual({
        text: `r${ack.step}`,
      });
    }
    expect((await storage.document(2 as DocumentId, "current"))?.value, where).toEqual({
      text: `c${m}`,
    });
    expect((await storage.document(3 as DocumentId, "current"))?.value, where).toEqual({
      text: `r${m}`,
    });
    expect((await storage.task(4 as TaskId))?.state, where).toEqual(running(m));
    const filler = await storage.scanEntries({ conversationId: 9 as never }, 10_000);
    expect(filler.items.length, where).toBe(FILLER);
    const generation = storage.generation;
    const others = readdirSync(path).filter((n) => /^gen-/.test(n) && n !== `gen-${generation}`);
    expect(others, `${where}: generations left besides gen-${generation}`).toEqual([]);
    if (generation > 0) expect(readdirSync(path), where).not.toContain("main.jsonl");
    await storage.compact();
    return { generation, steps: m };
  } finally {
    await storage.close();
  }
}
