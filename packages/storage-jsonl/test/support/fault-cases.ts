import { cpSync } from "node:fs";
import type {
  Batch,
  ConversationId,
  DocumentId,
  EntryId,
  Seq,
  Storage,
  TaskId,
} from "@durably/core";
import { afterAll } from "vitest";
import { openJsonlStorage, type JsonlStorage } from "../../src/index.js";
import type { FaultMode } from "./faulty-file-system.js";
import { commitAll, w } from "./records.js";
import { tempDir } from "./temp-dir.js";

/** One armed fault: the operation at index `at` fails `mode`. */
export interface FaultCase {
  at: number;
  mode: FaultMode;
}

/**
 * Every fault to try over a recorded list of file operations: each fails
 * before acting and after acting, and an append or a write also half way.
 * Operations matching `beforeOnly` (reads) change nothing when they fail
 * after acting either, so "before" covers them.
 */
export function faultCases(operations: readonly string[], beforeOnly?: RegExp): FaultCase[] {
  const cases: FaultCase[] = [];
  operations.forEach((op, at) => {
    const modes: FaultMode[] = beforeOnly?.test(op) ? ["before"] : ["before", "after"];
    if (op.startsWith("append ") || op.startsWith("write ")) modes.push("half");
    for (const mode of modes) cases.push({ at, mode });
  });
  return cases;
}

/**
 * Runs `run` once per fault case, each in a fresh directory (removed after).
 * `fail(what)` records a failure prefixed with its case (`append main.jsonl
 * #7 fails half: ...`); returns them all, so one test reports every broken
 * case at once instead of stopping at the first.
 */
export async function runFaultCases(
  operations: readonly string[],
  cases: readonly FaultCase[],
  fresh: () => { path: string; remove(): void },
  run: (fault: FaultCase, dir: { path: string }, fail: (what: string) => void) => Promise<void>,
): Promise<string[]> {
  const failures: string[] = [];
  for (const fault of cases) {
    const label = `${operations[fault.at]} #${fault.at} fails ${fault.mode}`;
    const dir = fresh();
    try {
      await run(fault, dir, (what) => failures.push(`${label}: ${what}`));
    } finally {
      dir.remove();
    }
  }
  return failures;
}

/**
 * A template directory, removed after the file's tests, and `fresh()`: a new
 * temp directory holding a copy of it, for one fault case.
 */
export function templateDirectory(): {
  path: string;
  fresh: () => { path: string; remove(): void };
} {
  const template = tempDir();
  afterAll(() => template.remove());
  return {
    path: template.path,
    fresh: () => {
      const dir = tempDir();
      cpSync(template.path, dir.path, { recursive: true });
      return dir;
    },
  };
}

/** What a promise settled with: its value, or the error it rejected with. */
export function settled(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) => error,
  );
}

/** After recovery, the storage takes a commit: entry 99 through `recovered`, which is then closed. */
export async function commitAfterRecovery(recovered: Storage): Promise<void> {
  await commitAll(recovered, [w.entry(99, 1, "after recovery")]);
  await recovered.close();
}

/** Opens `path` again and checks the commit after recovery is there (else `fail`s). Returns the instance, open. */
export async function reopenKeepsThatCommit(
  path: string,
  fail: (what: string) => void,
): Promise<JsonlStorage> {
  const again = await openJsonlStorage(path);
  if ((await again.entry(99 as EntryId)) === undefined) fail("a commit after recovery was lost");
  return again;
}

/**
 * The first batch of the fixture both fault tests build on: conversation 1,
 * entry 10, current-only documents 20 and 21, rewindable document 22, and
 * running task 30 (and whatever `more` adds).
 */
export function fixtureBatch(...more: Batch): Batch {
  return [
    w.conversation(1),
    w.entry(10, 1, "first"),
    w.createDoc(20, 1, { text: "a" }),
    w.createDoc(21, 1, { text: "b" }),
    w.createDoc(22, 1, { text: "r" }, "rewindable"),
    w.task(30, 1, { status: "running", checkpoint: 1 }),
    ...more,
  ];
}

/**
 * What the fault tests compare before and after a fault, over the fixture
 * both build: conversation 1's entries, documents 20 to 23 (`doc20`...),
 * document 22 at seq `historyAt` (`doc22AtSeq<n>`), the states of `tasks`
 * (`task<id>`) and the commit seqs of `entries` (`entry<id>`).
 */
export async function fixtureState(
  storage: Storage,
  options: { historyAt: number; tasks: readonly number[]; entries?: readonly number[] },
): Promise<Record<string, unknown>> {
  const doc = async (id: number, at: Seq | "current" = "current") =>
    (await storage.document(id as DocumentId, at))?.value;
  const page = await storage.scanEntries(
    { conversationId: 1 as ConversationId, order: "ascending" },
    100,
  );
  const state: Record<string, unknown> = { entries: page.items.map((e) => e.id) };
  for (const id of [20, 21, 22, 23]) state[`doc${id}`] = await doc(id);
  state[`doc22AtSeq${options.historyAt}`] = await doc(22, options.historyAt as Seq);
  for (const id of options.tasks) state[`task${id}`] = (await storage.task(id as TaskId))?.state;
  for (const id of options.entries ?? [])
    state[`entry${id}`] = (await storage.entry(id as EntryId))?.commitSeq;
  return state;
}
