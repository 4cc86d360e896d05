import { defineDoc, Session, type Batch, type EntryId } from "@durably/core";
import { describe, expect, it } from "vitest";
import { MemoryStorage } from "../src/index.js";

const Counter = defineDoc<{ n: number; tags: string[] }>({
  kind: "test.counter",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ n: 0, tags: [] }),
});

describe("MemoryStorage with the Session's sealed batches", () => {
  it("stores what the Session commits and reads it back as private copies a caller may change", async () => {
    const storage = new MemoryStorage();
    const session = await Session.open(storage);
    const { conversationId, entryId } = await session.commit(async (tx) => {
      const { id } = await tx.createConversation({ ownership: { kind: "ownerless" } });
      const entry = await tx.appendEntry(id, { kind: "test.note", data: { text: "first" } });
      const doc = await tx.doc(Counter, id);
      doc.n = 1;
      doc.tags.push("a");
      return { conversationId: id, entryId: entry.id };
    });
    await session.commit(async (tx) => {
      const doc = await tx.doc(Counter, conversationId);
      doc.n = 2;
      doc.tags.push("b");
    });

    const entry = (await storage.entry(entryId))?.entry;
    expect(entry?.data).toEqual({ text: "first" });
    expect(Object.isFrozen(entry)).toBe(false);
    (entry?.data as { text: string }).text = "changed by a reader";
    expect((await storage.entry(entryId))?.entry.data).toEqual({ text: "first" });

    const page = await storage.scanDocuments(
      { scope: { kind: "conversation", conversationId }, at: "current" },
      10,
    );
    const id = page.items[0]?.id;
    if (id === undefined) throw new Error(`no document stored for conversation ${conversationId}`);
    const doc = await storage.document(id, "current");
    expect(doc?.value).toEqual({ n: 2, tags: ["a", "b"] });
    expect(Object.isFrozen(doc?.value)).toBe(false);
    (doc?.value as { tags: string[] }).tags.push("changed by a reader");
    expect((await storage.document(id, "current"))?.value).toEqual({ n: 2, tags: ["a", "b"] });
    await session.close();
  });

  it("still copies a batch it was handed by anyone else, so the caller may reuse its objects", async () => {
    const storage = new MemoryStorage();
    const conversationId = await storage.mintId();
    const entryId = await storage.mintId();
    const data = { text: "as committed" };
    const batch = [
      { type: "conversation", value: { id: conversationId } },
      { type: "entry", value: { id: entryId, conversationId, kind: "test.note", data } },
    ] as unknown as Batch;
    const result = await storage.commit([batch], () => undefined);
    expect(result).toEqual({ stored: 1 });
    data.text = "changed after commit";
    const stored = await storage.entry(entryId as EntryId);
    expect(stored?.entry.data).toEqual({ text: "as committed" });
    await storage.close();
  });
});
