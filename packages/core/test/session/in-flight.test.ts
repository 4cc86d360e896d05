import { describe, expect, it } from "vitest";
import {
  DraftRevoked,
  ROOT_CONVERSATION_ID as ROOT,
  UnknownRecord,
  type ConversationId,
} from "../../src/index.js";
import { Notes, openTest } from "../support/session.js";

describe("session > operations the callback did not await", () => {
  it("belong to the commit: the entry and the document change are stored together", async () => {
    const { session } = await openTest();
    await session.commit(async (tx) => {
      void tx.appendEntry(ROOT, { kind: "note", data: "not awaited" });
      const notes = await tx.doc(Notes, ROOT);
      notes.text = "changed";
    });
    const page = await session.read.scanEntries({ conversationId: ROOT }, 10);
    expect(page.items.map((e) => e.data)).toEqual(["not awaited"]);
    expect(await session.snapshot(Notes, ROOT)).toMatchObject({ text: "changed" });
    await session.close();
  });

  it("fail the commit with their own error instead of being dropped, and the session goes on", async () => {
    const { session } = await openTest();
    const missing = 999_999 as ConversationId;
    await expect(
      session.commit((tx) => {
        void tx.appendEntry(ROOT, { kind: "note", data: "kept only if all succeed" });
        void tx.appendEntry(missing, { kind: "note" });
      }),
    ).rejects.toBeInstanceOf(UnknownRecord);
    const page = await session.read.scanEntries({ conversationId: ROOT }, 10);
    expect(page.items).toEqual([]);
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "note", data: "after" }));
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toHaveLength(1);
    await session.close();
  });

  it("fail the commit when one settled before the callback returned: a bad JSON value", async () => {
    const { session, storage } = await openTest();
    const calls = storage.commitCalls.length;
    const error = await session
      .commit(async (tx) => {
        void tx.appendEntry(ROOT, { kind: "x", data: "a" });
        void tx.appendEntry(ROOT, { kind: "x", data: [10n] as never });
        await Promise.resolve();
        await new Promise((resolve) => setTimeout(resolve, 1));
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toContain("entry.data[0]");
    expect(storage.commitCalls.length).toBe(calls);
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toEqual([]);
    await session.commit((tx) => tx.appendEntry(ROOT, { kind: "after" }));
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toHaveLength(1);
    await session.close();
  });

  it("fail the commit when one settled before the callback returned: an unknown conversation", async () => {
    const { session } = await openTest();
    const missing = 999_999 as ConversationId;
    await expect(
      session.commit(async (tx) => {
        void tx.appendEntry(ROOT, { kind: "x", data: "a" });
        void tx.appendEntry(missing, { kind: "x" });
        await new Promise((resolve) => setTimeout(resolve, 1));
      }),
    ).rejects.toBeInstanceOf(UnknownRecord);
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toEqual([]);
    await session.close();
  });

  it("fail the commit even when the callback awaited the failed one and caught its error", async () => {
    const { session } = await openTest();
    const missing = 999_999 as ConversationId;
    const caught: unknown[] = [];
    const error = await session
      .commit(async (tx) => {
        await tx.appendEntry(ROOT, { kind: "x", data: "a" });
        await tx.appendEntry(ROOT, { kind: "x", data: { bad: NaN } }).catch((e) => caught.push(e));
        await tx.appendEntry(missing, { kind: "x" }).catch((e) => caught.push(e));
        return "the callback returned normally";
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(caught).toHaveLength(2);
    expect(error).toBe(caught[0]);
    expect((await session.read.scanEntries({ conversationId: ROOT }, 10)).items).toEqual([]);
    expect(session.failed).toBeUndefined();
    await session.close();
  });

  it("report the callback's own error when the callback throws after an operation failed", async () => {
    const { session } = await openTest();
    await expect(
      session.commit(async (tx) => {
        await tx.appendEntry(ROOT, { kind: "x", data: { bad: NaN } }).catch(() => undefined);
        throw new Error("the callback's own error");
      }),
    ).rejects.toThrow("the callback's own error");
    await session.close();
  });

  it("publish nothing to watchers or subscribers when one of them failed", async () => {
    const { session } = await openTest();
    const published: unknown[] = [];
    session.watchDoc(Notes, ROOT, (value) => published.push(value));
    session.subscribeCommits((event) => published.push(event.seq));
    await expect(
      session.commit(async (tx) => {
        (await tx.doc(Notes, ROOT)).text = "never published";
        void tx.appendEntry(ROOT, { kind: "x", data: [1n] as never });
        await new Promise((resolve) => setTimeout(resolve, 1));
      }),
    ).rejects.toBeInstanceOf(TypeError);
    expect(published).toEqual([]);
    expect(await session.snapshot(Notes, ROOT)).toBeUndefined();
    await session.close();
  });

  it("cannot start after the callback settled", async () => {
    const { session } = await openTest();
    let leaked: Parameters<Parameters<typeof session.commit>[0]>[0] | undefined;
    await session.commit((tx) => {
      leaked = tx;
    });
    await expect(leaked!.appendEntry(ROOT, { kind: "late" })).rejects.toBeInstanceOf(DraftRevoked);
    await session.close();
  });
});
