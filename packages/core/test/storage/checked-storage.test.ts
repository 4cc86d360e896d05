import { describe, expect, it } from "vitest";
import {
  BatchRefused,
  Session,
  StorageClosed,
  StoragePoisoned,
  type ConversationId,
  type EntryId,
  type StorageWrite,
} from "../../src/index.js";
import { CheckedStorage, type CommitCall, type CommitOutcome } from "../../src/storage/index.js";
import { MemoryBackend } from "../support/memory.js";

/*
 * The front's own duties, over the real memory backend with one behaviour
 * changed per case: serialised commit calls, close, backend failures, and
 * what it does with what a backend reports.
 */

const root: StorageWrite = { type: "conversation", value: { id: 1 as ConversationId } };
const entry = (id: number): StorageWrite => ({
  type: "entry",
  value: { id: id as EntryId, conversationId: 1 as ConversationId, kind: "note" },
});

/** A memory backend whose commits wait for `release()` and log when they start and end. */
class GatedBackend extends MemoryBackend {
  readonly log: string[] = [];
  closes = 0;
  private gates: (() => void)[] = [];

  override async commit(call: CommitCall): Promise<CommitOutcome> {
    const n = this.log.filter((l) => l.startsWith("start")).length + 1;
    this.log.push(`start ${n}`);
    await new Promise<void>((resolve) => this.gates.push(resolve));
    const outcome = await super.commit(call);
    this.log.push(`end ${n}`);
    return outcome;
  }

  release(): void {
    this.gates.shift()?.();
  }

  override close(): Promise<void> {
    this.closes += 1;
    return super.close();
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("CheckedStorage", () => {
  it("runs commit calls one at a time, in the order they were made", async () => {
    const backend = new GatedBackend();
    const storage = new CheckedStorage(backend);
    const first = storage.commit([[root]], () => undefined);
    const second = storage.commit([[entry(2)]], () => undefined);
    await tick();
    expect(backend.log).toEqual(["start 1"]);
    backend.release();
    await tick();
    expect(backend.log).toEqual(["start 1", "end 1", "start 2"]);
    backend.release();
    expect(await first).toEqual({ stored: 1 });
    expect(await second).toEqual({ stored: 1 });
  });

  it("lets queued commits settle before closing the backend once; every later call rejects naming the storage", async () => {
    const backend = new GatedBackend();
    const storage = new CheckedStorage(backend);
    const commit = storage.commit([[root]], () => undefined);
    const closed = storage.close();
    expect(storage.close()).toBe(closed);
    await tick();
    expect(backend.closes).toBe(0);
    backend.release();
    expect(await commit).toEqual({ stored: 1 });
    await closed;
    expect(backend.closes).toBe(1);
    await expect(storage.mintId()).rejects.toThrow(new StorageClosed("memory storage is closed"));
    await expect(storage.commit([[entry(2)]], () => undefined)).rejects.toBeInstanceOf(
      StorageClosed,
    );
  });

  it("rejects every call, queued commits included, once the backend reports a failure", async () => {
    const failure = new StoragePoisoned("the disk said EIO", { cause: new Error("EIO") });
    class Failing extends GatedBackend {
      failed = false;
      failure() {
        return this.failed ? failure : undefined;
      }
    }
    const backend = new Failing();
    const storage = new CheckedStorage(backend);
    const first = storage.commit([[root]], () => undefined);
    const queued = storage.commit([[entry(2)]], () => undefined);
    await tick();
    backend.failed = true;
    backend.release();
    expect(await first).toEqual({ stored: 1 });
    await expect(queued).rejects.toBe(failure);
    await expect(storage.entry(2 as EntryId)).rejects.toBe(failure);
    expect(backend.log).toEqual(["start 1", "end 1"]);
  });

  it("turns a uniqueness conflict a backend found while storing into the planner's refusal of that batch", async () => {
    // Like a SQL backend that leaves duplicate entry ids to a primary key.
    class Optimistic extends MemoryBackend {
      override commit(call: CommitCall): CommitOutcome {
        const plans = call.plan(
          { ...this.planView(), hasEntry: () => false },
          this.index.lastSeq + 1,
        );
        for (let b = 0; b < plans.length; b++) {
          const plan = plans[b]!;
          for (const w of plan.writes)
            if (w.type === "entry" && this.index.entries.has(w.value.id))
              return {
                stored: b,
                conflict: { batchIndex: b, writeIndex: w.index, kind: "entry-exists" },
              };
          this.index.apply(plan, () => undefined);
        }
        return { stored: plans.length };
      }
    }
    const storage = new CheckedStorage(new Optimistic());
    await storage.commit([[root, entry(2)]], () => undefined);
    const seqs: number[] = [];
    const result = await storage.commit([[entry(3)], [entry(4), entry(2)], [entry(5)]], (_, seq) =>
      seqs.push(seq),
    );
    expect(result.stored).toBe(1);
    expect(seqs).toEqual([2]);
    expect(result.refused).toBeInstanceOf(BatchRefused);
    expect(result.refused).toMatchObject({
      reason: "immutable-record",
      batchIndex: 1,
      writeIndex: 1,
      message: "batch 1 write 1: entry 2 is already stored",
    });
  });

  it("rejects a commit whose backend reports batches it was never given", async () => {
    class Overclaiming extends MemoryBackend {
      override async commit(call: CommitCall): Promise<CommitOutcome> {
        return { stored: (await super.commit(call)).stored + 1 };
      }
    }
    const storage = new CheckedStorage(new Overclaiming());
    await expect(storage.commit([[root]], () => undefined)).rejects.toThrow(
      "memory storage: commit reported 2 stored batches, of 1 planned",
    );
  });

  it("keeps the Session's sealed batches as they are, and copies a batch anyone else hands it", async () => {
    const handed: (readonly (readonly StorageWrite[])[])[] = [];
    class Recording extends MemoryBackend {
      override commit(call: CommitCall) {
        handed.push(call.batches);
        return super.commit(call);
      }
    }
    const storage = new CheckedStorage(new Recording());
    const session = await Session.open(storage);
    await session.commit(async (tx) => {
      const { id } = await tx.createConversation({ ownership: { kind: "ownerless" } });
      await tx.appendEntry(id, { kind: "note", data: { text: "sealed" } });
    });
    const records = handed
      .flat(2)
      .flatMap((w) => (w.type === "conversation" || w.type === "entry" ? [w.value] : []));
    expect(records.length).toBeGreaterThanOrEqual(2);
    // The Session froze its values: a copy made by the front would not be frozen.
    for (const value of records) expect(Object.isFrozen(value), `record ${value.id}`).toBe(true);
    await session.close();

    const other = new CheckedStorage(new Recording());
    const batch = [root, entry(2)];
    await other.commit([batch], () => undefined);
    const copied = handed[handed.length - 1]?.[0];
    const value = (w: StorageWrite | undefined) => (w?.type === "entry" ? w.value : undefined);
    expect(value(copied?.[1])).toEqual(value(batch[1]));
    expect(value(copied?.[1])).not.toBe(value(batch[1]));
    await other.close();
  });
});
