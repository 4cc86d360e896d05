// Runs in a real browser page: StoreStorage on IndexedDB through browser-level.
import { BrowserLevel } from "browser-level";
import type { ConversationId, DocumentId, StorageWrite } from "@durably/core";
import { StoreStorage, dumpKeys, levelStore } from "../../src/index.js";

async function open(name: string) {
  return StoreStorage.open(levelStore(new BrowserLevel(name)));
}

async function write(name: string): Promise<number[]> {
  const storage = await open(name);
  const seqs: number[] = [];
  const batches: StorageWrite[][] = [
    [
      { type: "conversation", value: { id: 1 as ConversationId } },
      {
        type: "entry",
        value: { id: 2, conversationId: 1, kind: "note", data: "hello" },
      } as StorageWrite,
      {
        type: "document.create",
        record: { id: 3, kind: "app.notes", scope: { kind: "conversation", conversationId: 1 } },
        content: { kind: "base", version: 1, value: { text: "" } },
      } as unknown as StorageWrite,
    ],
    [
      {
        type: "entry",
        value: { id: 4, conversationId: 1, kind: "note", data: "goodbye" },
      } as StorageWrite,
      {
        type: "document.change",
        id: 3 as DocumentId,
        content: { kind: "delta", version: 1, ops: [["s", ["text"], "after goodbye"]] },
      },
    ],
  ];
  const result = await storage.commit(batches, (_i, seq) => seqs.push(seq));
  if (result.refused) throw result.refused;
  await storage.close();
  return seqs;
}

async function read(name: string) {
  const storage = await open(name);
  const entries = await storage.scanEntries(
    { conversationId: 1 as ConversationId, order: "ascending" },
    10,
  );
  const notes = await storage.document(3 as DocumentId, "current");
  const keys = (await dumpKeys(storage.store)).length;
  const persistent = storage.capabilities.persistent;
  const next = await storage.mintId();
  await storage.close();
  return { entries: entries.items, notes: notes?.value, keys, persistent, next };
}

(globalThis as { durably?: unknown }).durably = { write, read };
// The page's title tells the test the module has run (typed locally: the package compiles without the DOM lib).
(globalThis as unknown as { document: { title: string } }).document.title = "ready";
