import { describe, expect, it } from "vitest";
import { ROOT_CONVERSATION_ID as ROOT, Session, StorageLocked } from "../../src/index.js";
import { FaultyStorage } from "../support/faulty-storage.js";
import { MemoryStorage } from "../support/memory.js";
import { Notes } from "../support/session.js";

describe("session > one open Session per storage object", () => {
  it("a second Session.open over a storage an open Session owns is refused StorageLocked; the first goes on", async () => {
    const storage = new MemoryStorage();
    const first = await Session.open(storage);
    await first.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text = "first";
    });
    const error: unknown = await Session.open(storage).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageLocked);
    expect((error as Error).message).toContain("share that Session");
    await first.commit(async (tx) => {
      (await tx.doc(Notes, ROOT)).text += " and still first";
    });
    expect(await first.snapshot(Notes, ROOT)).toMatchObject({ text: "first and still first" });
    await first.close();
  });

  it("a storage whose Session failed to open is not kept: it can be opened again", async () => {
    const storage = new FaultyStorage(new MemoryStorage());
    storage.readFault = { name: "conversation", error: new Error("read failed"), times: 1 };
    await expect(Session.open(storage)).rejects.toThrow("read failed");
    const session = await Session.open(storage);
    await session.close();
  });
});
