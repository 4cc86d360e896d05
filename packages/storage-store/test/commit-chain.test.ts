import { describe, expect, it } from "vitest";
import { StorageCorrupted, type ConversationId, type StorageWrite } from "@durably/core";
import { StoreStorage, dumpKeys, type KeyValueStore } from "../src/index.js";
import { backends } from "./backends.js";
import { framed } from "./framing-helper.js";

const C = 1 as ConversationId;
const entry = (id: number) =>
  ({
    type: "entry",
    value: { id, conversationId: C, kind: "note", data: { id } },
  }) as unknown as StorageWrite;
const none = () => undefined;

/**
 * Commits `count` calls (call 1 creates the conversation, call k appends
 * entry k+1), noting the keys each call added; lets `edit` change the raw
 * store; reopens. Returns the storage or the error the open rejected with.
 */
async function afterEdit(
  backend: (typeof backends)[number],
  count: number,
  edit: (store: KeyValueStore, added: string[][]) => Promise<void>,
): Promise<{ result: unknown; cleanup: () => void }> {
  const { store, reopen, cleanup } = backend.fresh();
  const storage = await StoreStorage.open(store);
  const added: string[][] = [];
  let known = new Set<string>();
  for (let call = 1; call <= count; call++) {
    await storage.commit(
      call === 1 ? [[{ type: "conversation", value: { id: C } }]] : [[entry(call + 1)]],
      none,
    );
    const keys = (await dumpKeys(storage.store)).map((p) => p.key);
    added.push(keys.filter((k) => !known.has(k)));
    known = new Set(keys);
  }
  await storage.close();
  const raw = (reopen as () => KeyValueStore)();
  await raw.open?.();
  await edit(raw, added);
  await raw.close();
  const result = await StoreStorage.open((reopen as () => KeyValueStore)()).catch(
    (e: unknown) => e,
  );
  return { result, cleanup };
}

async function expectCorrupted(
  backend: (typeof backends)[number],
  count: number,
  edit: (store: KeyValueStore, added: string[][]) => Promise<void>,
): Promise<StorageCorrupted> {
  const { result, cleanup } = await afterEdit(backend, count, edit);
  try {
    if (result instanceof StoreStorage) await result.close();
    expect(result).toBeInstanceOf(StorageCorrupted);
    return result as StorageCorrupted;
  } finally {
    cleanup();
  }
}

for (const backend of backends.filter((b) => b.persistent)) {
  describe(`StoreStorage on ${backend.name} > commit chain`, () => {
    it("a store that lost one write from the middle while later writes survived fails to open, naming the missing seq", async () => {
      const error = await expectCorrupted(backend, 6, async (store, added) => {
        // Call 3 (seq 3) never happened, as far as the store can tell; calls 4 to 6 did.
        await store.write((added[2] ?? []).map((key) => ({ type: "del", key })));
      });
      expect(error.message).toContain("the writes of seqs 3 to 3 are missing");
      expect(error.location).toMatchObject({ key: "l/0000000000000003", seq: 3 });
    });

    it("counters older than the newest marker (a stale m/counters) fail the open", async () => {
      const error = await expectCorrupted(backend, 4, async (store) => {
        const markers = await dumpKeys(store, { prefix: "l/" });
        const newest = markers.at(-1) as { key: string; value: string };
        // A marker of seq 5, linked to seq 4's, beyond the counters' seq 4.
        const forged = JSON.stringify({ to: 5, prev: newest.value.slice(0, 8) });
        await store.write([
          { type: "put", key: "l/0000000000000005", value: framed("l/0000000000000005", forged) },
        ]);
      });
      expect(error.message).toContain("beyond seq 4 in m/counters");
      expect(error.location.key).toBe("m/counters");
    });

    it("a marker that does not link to the one before it (a mix of two histories) fails the open", async () => {
      const error = await expectCorrupted(backend, 4, async (store) => {
        const forged = JSON.stringify({ to: 3, prev: "00000000" });
        await store.write([
          { type: "put", key: "l/0000000000000003", value: framed("l/0000000000000003", forged) },
        ]);
      });
      expect(error.message).toMatch(/marker l\/0000000000000003 links to 00000000/);
      expect(error.location).toMatchObject({ key: "l/0000000000000003", seq: 3 });
    });

    it("an intact store reopens, and later commits continue the chain", async () => {
      const { result, cleanup } = await afterEdit(backend, 5, () => Promise.resolve());
      try {
        expect(result).toBeInstanceOf(StoreStorage);
        const storage = result as StoreStorage;
        const seqs: number[] = [];
        await storage.commit([[entry(40)], [entry(41)]], (_i, seq) => seqs.push(seq));
        expect(seqs).toEqual([6, 7]);
        const markers = (await dumpKeys(storage.store, { prefix: "l/" })).map((p) => p.key);
        expect(markers.at(-1)).toBe("l/0000000000000006");
        await storage.close();
      } finally {
        cleanup();
      }
    });
  });
}
