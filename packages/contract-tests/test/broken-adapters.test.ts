/**
 * Proves the storage suite catches real adapter bugs: each broken variant of
 * MemoryStorage is run through the registered suite with a recording runner,
 * and the rule groups that must catch its bug have to report failures.
 */
import {
  type Batch,
  type CallOptions,
  type CommitResult,
  type Cursor,
  type EntryId,
  type EntryQuery,
  type EntryRecord,
  type Page,
  type Seq,
  type Storage,
  type TaskQuery,
  type TaskRecord,
} from "@durably/core";
import { encodeCursor } from "@durably/core/storage";
// By path, not by package name: see test/support/memory-handles.ts.
import { MemoryStorage } from "../../storage-memory/src/index.js";
import { describe, expect, it } from "vitest";
import {
  registerStorageConformance,
  storageScenarios,
  type StorageFactory,
  type StorageRule,
} from "../src/index.js";
import {
  forgetsIdsOnReopen,
  keepsFirstReplacementOfACall,
  persistentHandle,
  reopenable,
  simpleFactory,
} from "./support/memory-handles.js";
import { failedIn, failedNames, failedRules, runRegistered } from "./support/recording-runner.js";

function runSuite(factory: StorageFactory) {
  return runRegistered((api) => registerStorageConformance(api, "variant", factory));
}

// ---- the broken variants ----

/** Caches written entries by reference and serves reads from that cache: no detachment. */
class KeepsCallerReferences extends MemoryStorage {
  private readonly cache = new Map<number, { entry: EntryRecord; commitSeq: Seq }>();
  override async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    const seqs: Seq[] = [];
    const result = await super.commit(
      batches,
      (i, seq) => (seqs.push(seq), receive(i, seq)),
      options,
    );
    for (let b = 0; b < result.stored; b++)
      for (const write of batches[b] ?? [])
        if (write.type === "entry")
          this.cache.set(write.value.id, { entry: write.value, commitSeq: seqs[b] as Seq });
    return result;
  }
  override async entry(id: EntryId, options?: CallOptions) {
    return this.cache.get(id) ?? super.entry(id, options);
  }
}

/** On refusal, keeps the refused batch's writes before the bad one (half a batch). */
class StoresHalfOfARefusedBatch extends MemoryStorage {
  override async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    const result = await super.commit(batches, receive, options);
    const refused = result.refused as { batchIndex: number; writeIndex: number } | undefined;
    if (refused !== undefined) {
      const prefix = (batches[refused.batchIndex] ?? []).slice(0, refused.writeIndex);
      if (prefix.length > 0) await super.commit([prefix], () => undefined);
    }
    return result;
  }
}

/** Mints from its own counter starting at 1, ignoring committed ids. */
class ReusesIds extends MemoryStorage {
  private nextId = 1;
  override async mintId(): Promise<number> {
    await super.mintId();
    return this.nextId++;
  }
}

/** Drops `order` from every entry and task scan query. */
class IgnoresOrder extends MemoryStorage {
  override async scanEntries(
    query: EntryQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<EntryRecord>> {
    const { order: _order, ...rest } = query;
    return super.scanEntries(rest, limit, cursor, options);
  }
  override async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    const { order: _order, ...rest } = query;
    return super.scanTasks(rest, limit, cursor, options);
  }
}

/** Sets `next` whenever a page is full, even when nothing follows (a classic cursor bug). */
class NextOnEveryFullPage extends MemoryStorage {
  override async scanTasks(
    query: TaskQuery,
    limit: number,
    cursor?: Cursor,
    options?: CallOptions,
  ): Promise<Page<TaskRecord>> {
    const page = await super.scanTasks(query, limit, cursor, options);
    const last = page.items[page.items.length - 1];
    if (page.next === undefined && last !== undefined && page.items.length === limit)
      return { items: page.items, next: encodeCursor("scanTasks", query, last.id) };
    return page;
  }
}

/** Calls receive for the stored batches in reverse order. */
class ReceivesOutOfOrder extends MemoryStorage {
  override async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    const calls: [number, Seq][] = [];
    const result = await super.commit(batches, (i, seq) => calls.push([i, seq]), options);
    for (const [i, seq] of calls.reverse()) receive(i, seq);
    return result;
  }
}

const variants: [string, () => Storage, StorageRule[]][] = [
  ["keeps caller references (no detachment)", () => new KeepsCallerReferences(), ["detachment"]],
  ["stores half of a refused batch", () => new StoresHalfOfARefusedBatch(), ["refusal"]],
  ["reuses ids and mints 1", () => new ReusesIds(), ["ids"]],
  ["ignores the order of entry and task scans", () => new IgnoresOrder(), ["scans", "entry scans"]],
  ["sets next on a full last page", () => new NextOnEveryFullPage(), ["scans"]],
  ["calls receive out of order", () => new ReceivesOutOfOrder(), ["per-batch seq"]],
];

describe("the storage suite against deliberately broken adapters", () => {
  it("passes every scenario on the correct MemoryStorage", async () => {
    const outcomes = await runSuite(simpleFactory(() => new MemoryStorage()));
    expect(failedNames(outcomes)).toEqual([]);
    expect(outcomes.length).toBe(Object.values(storageScenarios).flat().length);
  });

  it("passes every scenario, persistence included, on a reopenable storage that declares persistent", async () => {
    expect(failedNames(await runSuite(reopenable((data) => persistentHandle(data))))).toEqual([]);
  });

  it("fails the persistence rules for a persistent storage whose factory passes no reopen", async () => {
    const outcomes = await runSuite(simpleFactory(() => persistentHandle(new MemoryStorage())));
    expect([...failedRules(outcomes)].sort()).toEqual(["closing", "persistence"]);
  });

  it("fails the persistence rules for a storage that reuses ids after reopen", async () => {
    const outcomes = await runSuite(reopenable(forgetsIdsOnReopen));
    expect(failedIn(outcomes, "persistence")).toContain(
      "ids are never reused and seqs keep increasing across reopen",
    );
  });

  it("fails the persistence rules for a storage that reopens with the first of a call's replacements", async () => {
    const outcomes = await runSuite(reopenable(keepsFirstReplacementOfACall));
    expect(failedIn(outcomes, "persistence")).toEqual([
      "a task and a submission replaced twice in one commit call (one batch) reopen with the last value",
      "a task and a submission replaced twice in one commit call (two batches) reopen with the last value",
    ]);
  });

  for (const [what, make, rules] of variants)
    it(`fails the ${rules.join(" and ")} rules for an adapter that ${what}`, async () => {
      const outcomes = await runSuite(simpleFactory(make));
      const failed = failedRules(outcomes);
      for (const rule of rules)
        expect([...failed], `failed groups: ${failedNames(outcomes).join("; ")}`).toContain(rule);
      // Failure messages name the rule group they check.
      const first = outcomes.find(
        (o) => o.status === "failed" && rules.includes(o.rule as StorageRule),
      );
      expect((first?.error as Error).message).toContain(`[${first?.rule}]`);
    });
});
