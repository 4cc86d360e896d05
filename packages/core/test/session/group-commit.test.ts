import { describe, expect, it } from "vitest";
import { ROOT_CONVERSATION_ID as ROOT, type CommitEvent } from "../../src/index.js";
import { Notes, openTest } from "../support/session.js";

describe("session > group commit", () => {
  it("64 concurrent commits against a slow storage travel in far fewer storage.commit calls, each batch with its own seq", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 3;
    const before = storage.commitCalls.length;
    const events: CommitEvent[] = [];
    session.subscribeCommits((e) => events.push(e));
    const order: number[] = [];
    const commits = Array.from({ length: 64 }, (_, i) =>
      session
        .commit(async (tx) => {
          (await tx.doc(Notes, ROOT)).items.push(i);
          return tx.appendEntry(ROOT, { kind: "n", data: i });
        })
        .then((entry) => {
          order.push(i);
          return entry;
        }),
    );
    const entries = await Promise.all(commits);
    const calls = storage.commitCalls.length - before;
    console.log(
      `64 concurrent commits -> ${calls} storage.commit calls (${(64 / calls).toFixed(1)} batches per call)`,
    );
    expect(calls).toBeLessThanOrEqual(4);
    expect(order).toEqual(Array.from({ length: 64 }, (_, i) => i)); // promises resolve in seq order
    const seqs = events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(64);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    for (const [i, entry] of entries.entries()) {
      const stored = await session.read.entry(entry.id);
      expect(stored?.commitSeq).toBe(seqs[i]);
    }
    expect(await session.snapshot(Notes, ROOT)).toEqual({
      text: "",
      items: Array.from({ length: 64 }, (_, i) => i),
    });
    await session.close();
  });

  it("publishes to watchers and subscribers only after storage stored the batch, in seq order", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 10;
    const log: string[] = [];
    session.watchDoc(Notes, ROOT, (v) => log.push(`watch:${v?.text}`));
    session.subscribeCommits((e) => log.push(`stored:${e.seq}`));
    const p1 = session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text = "one";
    });
    const p2 = session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text = "two";
    });
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect(log).toEqual([]); // prepared, not stored yet
    expect(await Promise.race([p1.then(() => "resolved"), Promise.resolve("pending")])).toBe(
      "pending",
    );
    await Promise.all([p1, p2]);
    expect(log).toEqual(["stored:2", "watch:one", "stored:3", "watch:two"]);
    await session.close();
  });

  it("an empty commit resolves only after the commits it read from are stored", async () => {
    const { session, storage } = await openTest();
    storage.commitDelayMs = 10;
    const order: string[] = [];
    const write = session
      .commit((tx) => tx.appendEntry(ROOT, { kind: "w" }))
      .then(() => order.push("write"));
    const read = session
      .commit(async (tx) => (await tx.scanEntries({ conversationId: ROOT }, 5)).items.length)
      .then((n) => order.push(`read:${n}`));
    await Promise.all([write, read]);
    expect(order).toEqual(["write", "read:1"]);
    await session.close();
  });
});
