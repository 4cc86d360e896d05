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
