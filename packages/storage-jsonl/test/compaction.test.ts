import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DocumentId, EntryId, Seq, TaskId } from "@durably/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openJsonlStorage, type JsonlStorage } from "../src/index.js";
import { commitAll, w } from "./support/records.js";
import { tempDir } from "./support/temp-dir.js";

let dir: { path: string; remove(): void };
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const file = (name: string) => join(dir.path, name);

/** A storage with one of everything: live and terminal tasks, rewindable and current-only documents, a retired one. */
async function fill(storage: JsonlStorage): Promise<void> {
  await commitAll(storage, [
    w.conversation(1),
    w.createDoc(4, 1, { text: "r0" }, "rewindable"),
    w.createDoc(5, 1, { text: "c0" }),
    w.createDoc(9, 1, { text: "gone" }),
  ]);
  await commitAll(storage, [w.entry(6, 1, "hello"), w.setText(4, "r1"), w.setText(5, "c1")]);
  await commitAll(storage, [w.task(7, 1, { status: "running", checkpoint: { step: 1 } })]);
  await commitAll(storage, [w.task(8, 1, { status: "running", checkpoint: null })]);
  await commitAll(storage, [
    w.task(8, 1, { status: "terminal", outcome: { kind: "done", value: 1 } } as never),
  ]);
  await commitAll(storage, [w.setText(4, "r2"), w.base(5, { text: "c2" }), w.retire(9)]);
  await commitAll(storage, [w.entry(10, 1, "goodbye"), w.setText(5, "c3")]);
}

/** Everything `fill` stored, read back. */
async function readAll(storage: JsonlStorage) {
  return {
    conversation: await storage.conversation(1 as never),
    entries: (await storage.scanEntries({ conversationId: 1 as never }, 10)).items,
    entry6: await storage.entry(6 as EntryId),
    task7: await storage.task(7 as TaskId),
    task8: await storage.task(8 as TaskId),
    rewindable: await storage.document(4 as DocumentId, "current"),
    rewindableAt2: await storage.document(4 as DocumentId, 2 as Seq),
    rewindableAt1: await storage.document(4 as DocumentId, 1 as Seq),
    currentOnly: await storage.document(5 as DocumentId, "current"),
    retired: await storage.document(9 as DocumentId, "current"),
    docs: (
      await storage.scanDocuments(
        { scope: { kind: "conversation", conversationId: 1 as never }, at: "current" },
        10,
      )
    ).items,
    id: await storage.mintId(),
  };
}

describe("compaction", () => {
  it("keeps every readable record, switches to a new generation and removes the old files", async () => {
    let storage = await openJsonlStorage(dir.path);
    await fill(storage);
    const before = await readAll(storage);
    expect(storage.generation).toBe(0);
    const result = await storage.compact();
    expect(result.generation).toBe(1);
    expect(storage.generation).toBe(1);
    expect(await readAll(storage)).toEqual({ ...before, id: before.id + 1 });
    expect(readFileSync(file("CURRENT"), "utf8")).toMatch(
      /^\{"format":3,"generation":1,"crc":[0-9]+\}\n$/,
    );
    expect(existsSync(file("main.jsonl"))).toBe(false);
    expect(readdirSync(file("gen-1")).sort()).toEqual([
      "doc-4.jsonl",
      "doc-5.jsonl",
      "main.jsonl",
      "snapshot.jsonl",
    ]);
    await commitAll(storage, [w.entry(12, 1, "after"), w.setText(4, "r3")]);
    await storage.close();
    storage = await openJsonlStorage(dir.path);
    const after = await readAll(storage);
    expect(after.entries.map((e) => e.data)).toEqual(["after", "goodbye", "hello"]);
    expect(after.rewindableAt2).toEqual(before.rewindableAt2);
    expect(after.rewindable?.value).toEqual({ text: "r3" });
    expect(after.id).toBeGreaterThan(12);
    await storage.compact();
    expect(storage.generation).toBe(2);
    expect(existsSync(file("gen-1"))).toBe(false);
    await storage.close();
    storage = await openJsonlStorage(dir.path);
    expect((await readAll(storage)).rewindable?.value).toEqual({ text: "r3" });
    await storage.close();
  });
});
