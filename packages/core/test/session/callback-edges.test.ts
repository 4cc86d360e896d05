import { describe, expect, it } from "vitest";
import { NestedCommit, ROOT_CONVERSATION_ID as ROOT } from "../../src/index.js";
import { Notes, openTest } from "../support/session.js";

describe("session > what a commit callback returns, and who hears of a commit", () => {
  it("a commit whose callback returns its draft (or a part of it) resolves once stored, never rejects after storing", async () => {
    const { session } = await openTest();
    let runs = 0;
    await expect(
      session.commit(async (tx) => {
        runs++;
        const notes = await tx.doc(Notes, ROOT);
        notes.text = "hello";
        return notes;
      }),
    ).resolves.toBeDefined();
    await expect(
      session.commit(async (tx) => {
        runs++;
        const notes = await tx.doc(Notes, ROOT);
        notes.items.push(1);
        return notes.items;
      }),
    ).resolves.toBeDefined();
    expect(runs).toBe(2);
    expect(await session.snapshot(Notes, ROOT)).toEqual({ text: "hello", items: [1] });
    await session.close();
  });

  it("a watcher or subscriber disposed by an earlier one during a notification is not called for it", async () => {
    const { session } = await openTest();
    const heard: string[] = [];
    let disposeB = (): void => undefined;
    session.watchDoc(Notes, ROOT, (value) => {
      heard.push(`A ${value?.text}`);
      disposeB();
    });
    disposeB = session.watchDoc(Notes, ROOT, (value) => heard.push(`B ${value?.text}`));
    let disposeY = (): void => undefined;
    session.subscribeCommits(() => {
      heard.push("X");
      disposeY();
    });
    disposeY = session.subscribeCommits(() => heard.push("Y"));
    await session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text = "one";
    });
    await session.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text = "two";
    });
    expect(heard.filter((h) => h.startsWith("A") || h.startsWith("B"))).toEqual(["A one", "A two"]);
    expect(heard.filter((h) => h === "X" || h === "Y")).toEqual(["X", "X"]);
    await session.close();
  });

  it("close() inside a commit callback rejects NestedCommit instead of waiting for the callback forever; the commit stores", async () => {
    const { session } = await openTest();
    let closing: unknown;
    await session.commit(async (tx) => {
      closing = await session.close().catch((error: unknown) => error);
      await tx.appendEntry(ROOT, { kind: "kept" });
    });
    expect(closing).toBeInstanceOf(NestedCommit);
    expect((closing as Error).message).toContain("close once the commit has settled");
    const entries = await session.read.scanEntries({ conversationId: ROOT }, 10);
    expect(entries.items.map((e) => e.kind)).toEqual(["kept"]);
    await session.close();
  });
});
