import { describe, expect, it } from "vitest";
import { ROOT_CONVERSATION_ID as ROOT, type StorageWrite } from "../../src/index.js";
import { Notes, openTest } from "../support/session.js";

const stream = (text: string) => async (tx: import("../../src/index.js").Transaction) => {
  (await tx.doc(Notes, ROOT)).text += text;
};

describe("session > deferred progress", () => {
  it("is published at once and reaches storage later, coalesced into one batch, at the next ordinary commit", async () => {
    const { session, storage } = await openTest({
      settings: { progress: { persistWithinMs: 60_000 } },
    });
    await session.commit(async (tx) => void (await tx.doc(Notes, ROOT)));
    const watched: string[] = [];
    session.watchDoc(Notes, ROOT, (v) => watched.push(v!.text));
    const batches: StorageWrite[][] = [];
    session.subscribeCommits((e) => batches.push([...e.writes]));
    const calls = storage.commitCalls.length;
    for (const chunk of ["a", "b", "c"])
      await session.commit(stream(chunk), { durability: "deferred" });
    expect(watched).toEqual(["a", "ab", "abc"]);
    expect(storage.commitCalls.length).toBe(calls); // nothing stored yet
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "done" }));
    expect(storage.commitCalls.length).toBe(calls + 1); // deferred batch + ordinary batch in one call
    expect(batches.map((b) => b.map((w) => w.type))).toEqual([["document.change"], ["entry"]]);
    expect((batches[0]![0] as Extract<StorageWrite, { type: "document.change" }>).content).toEqual({
      kind: "delta",
      version: 1,
      ops: [
        ["a", ["text"], "a"],
        ["a", ["text"], "b"],
        ["a", ["text"], "c"],
      ],
    });
    await session.close();
  });

  it("is stored when the affected document is read", async () => {
    const { session, storage } = await openTest({
      settings: { progress: { persistWithinMs: 60_000 } },
    });
    await session.commit(stream("x"), { durability: "deferred" });
    expect(
      await storage.inner.findDocument(
        { kind: "test.notes", scope: { kind: "conversation", conversationId: ROOT } },
        "current",
      ),
    ).toBeUndefined();
    expect(await session.snapshot(Notes, ROOT)).toEqual({ text: "x", items: [] });
    expect(
      await storage.inner.findDocument(
        { kind: "test.notes", scope: { kind: "conversation", conversationId: ROOT } },
        "current",
      ),
    ).toBeDefined();
    await session.close();
  });

  it("is stored within persistWithinMs without any other trigger", async () => {
    const { session, storage } = await openTest({
      settings: { progress: { persistWithinMs: 20 } },
    });
    await session.commit(stream("t"), { durability: "deferred" });
    const calls = storage.commitCalls.length;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(storage.commitCalls.length).toBe(calls + 1);
    await session.close();
  });

  it("is stored by close()", async () => {
    const { session, storage } = await openTest({
      settings: { progress: { persistWithinMs: 60_000 } },
    });
    await session.commit(stream("bye"), { durability: "deferred" });
    const inner = storage.inner;
    const calls = storage.commitCalls.length;
    await session.close();
    expect(storage.commitCalls.length).toBe(calls + 1);
    void inner;
  });

  it("waits for earlier ordinary commits before it is published", async () => {
    const { session, storage } = await openTest({
      settings: { progress: { persistWithinMs: 60_000 } },
    });
    storage.commitDelayMs = 10;
    const log: string[] = [];
    const stored = () => storage.seqs.length;
    const before = stored();
    session.watchDoc(Notes, ROOT, (v) => log.push(`${v!.text} after ${stored() - before} stored`));
    const ordinary = session.commit(stream("o")).then(() => log.push("ordinary resolved"));
    const deferred = session
      .commit(stream("d"), { durability: "deferred" })
      .then(() => log.push("deferred resolved"));
    await Promise.all([ordinary, deferred]);
    // Watchers run synchronously at publication; promise continuations follow.
    expect(log).toEqual([
      "o after 1 stored",
      "od after 1 stored",
      "ordinary resolved",
      "deferred resolved",
    ]);
    await session.close();
  });

  it("coalesces a document created and changed across deferred commits into one creation", async () => {
    const { session } = await openTest({ settings: { progress: { persistWithinMs: 60_000 } } });
    const batches: StorageWrite[][] = [];
    session.subscribeCommits((e) => batches.push([...e.writes]));
    await session.commit(stream("1"), { durability: "deferred" });
    await session.commit(stream("2"), { durability: "deferred" });
    await session.commit(() => undefined);
    expect(batches.map((b) => b.map((w) => w.type))).toEqual([["document.create"]]);
    expect(batches[0]![0]).toMatchObject({
      content: { kind: "base", value: { text: "12", items: [] } },
    });
    await session.close();
  });
});
