import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { crc32 } from "node:zlib";
import { join } from "node:path";
import type { DocumentId, EntryId, Seq, TaskId } from "@durably/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  nodeFileSystem,
  openJsonlStorage,
  type FileSystem,
  type JsonlStorage,
} from "../src/index.js";
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

describe("commits during a compaction", () => {
  it("commits made while a compaction runs land in the new generation, none lost, none doubled", async () => {
    let storage = await openJsonlStorage(dir.path, { compaction: false });
    await commitAll(storage, [
      w.conversation(1),
      w.createDoc(2, 1, { text: "" }),
      w.createDoc(3, 1, { text: "" }, "rewindable"),
    ]);
    // Enough to snapshot that the compaction's background write overlaps the commits below.
    let nextId = 10;
    for (let i = 0; i < 40; i++)
      await commitAll(
        storage,
        Array.from({ length: 100 }, () => w.entry(nextId++, 1, "y".repeat(200))),
      );
    const filled = nextId - 10;
    const running = storage.compact();
    const during: { seq: number; step: number }[] = [];
    for (let step = 1; step <= 60; step++) {
      const [seq] = await commitAll(storage, [
        w.entry(nextId++, 1, `step ${step}`),
        w.setText(2, `s${step}`),
        w.setText(3, `r${step}`),
      ]);
      during.push({ seq: seq as number, step });
    }
    const result = await running;
    // The snapshot was taken before some of these commits: those were caught up into the new tail.
    expect(result.seq).toBeLessThan(during[during.length - 1]?.seq as number);
    for (let step = 61; step <= 70; step++)
      await commitAll(storage, [
        w.entry(nextId++, 1, `step ${step}`),
        w.setText(2, `s${step}`),
        w.setText(3, `r${step}`),
      ]);
    const check = async (s: JsonlStorage) => {
      const page = await s.scanEntries({ conversationId: 1 as never, order: "ascending" }, 100_000);
      const steps = page.items
        .map((e) => e.data)
        .filter((d) => typeof d === "string" && d.startsWith("step "));
      expect(page.items.length).toBe(filled + 70);
      expect(steps).toEqual(Array.from({ length: 70 }, (_, i) => `step ${i + 1}`));
      expect((await s.document(2 as DocumentId, "current"))?.value).toEqual({ text: "s70" });
      for (const { seq, step } of during)
        expect(
          (await s.document(3 as DocumentId, seq as Seq))?.value,
          `rewindable at seq ${seq}`,
        ).toEqual({ text: `r${step}` });
    };
    await check(storage);
    await storage.close();
    storage = await openJsonlStorage(dir.path, { compaction: false });
    expect(storage.generation).toBe(1);
    await check(storage);
    await storage.close();
  });

  it("a compaction started by size runs in the background and shrinks a churned log", async () => {
    const storage = await openJsonlStorage(dir.path, {
      compaction: { ratio: 2, minBytes: 64 * 1024 },
    });
    await commitAll(storage, [w.conversation(1), w.createDoc(2, 1, { text: "" })]);
    // Bases: the document's live data stays one value however many commits change it.
    for (let step = 1; step <= 3000; step++)
      await commitAll(storage, [w.base(2, { text: `value ${step}` })]);
    // The size trigger started it during the loop; a short loop of fast commits may end before
    // it does. Nothing here calls compact(): if the trigger had not fired, generation stays 0.
    for (let waited = 0; storage.generation === 0 && waited < 10_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(storage.lastCompactionError).toBeUndefined();
    expect(storage.generation).toBeGreaterThan(0);
    await storage.close(); // waits for a compaction under way
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.generation).toBeGreaterThan(0);
    expect((await reopened.document(2 as DocumentId, "current"))?.value).toEqual({
      text: "value 3000",
    });
    const gen = `gen-${reopened.generation}`;
    const bytes = readdirSync(file(gen)).reduce(
      (n, name) => n + readFileSync(join(file(gen), name)).length,
      0,
    );
    // 3000 changes of ~150 bytes each were written; what is left is the newest ones since the last compaction.
    expect(bytes).toBeLessThan(3000 * 150);
    await reopened.close();
  });

  it("compaction: false never compacts by itself; compact() still does", async () => {
    const storage = await openJsonlStorage(dir.path, { compaction: false });
    await commitAll(storage, [w.conversation(1), w.createDoc(2, 1, { text: "" })]);
    for (let step = 1; step <= 2000; step++)
      await commitAll(storage, [w.setText(2, `value ${step}`)]);
    expect(storage.generation).toBe(0);
    await storage.compact();
    expect(storage.generation).toBe(1);
    await storage.close();
  });

  it("rejects a bad compaction option with a RangeError", async () => {
    await expect(openJsonlStorage(dir.path, { compaction: { ratio: 1 } })).rejects.toThrow(
      RangeError,
    );
    // The lock was released: the directory opens.
    await (await openJsonlStorage(dir.path)).close();
  });
});

/** A line as a format-1 writer wrote it: no `call`, its own checksum. */
function asFormat1(line: string): string {
  const json = line
    .replace(/,"crc":[0-9]+\}$/, "}")
    .replace('{"format":2,', '{"format":1,')
    .replace(/,"call":[0-9]+/, "");
  return `${json.slice(0, -1)},"crc":${crc32(json)}}`;
}

describe("directories written by earlier versions", () => {
  it("a directory with format-1 records (no CURRENT, files at the top) opens, compacts and reopens from its snapshot", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [
      w.conversation(1),
      w.createDoc(4, 1, { text: "a" }, "rewindable"),
      w.task(8, 1, { status: "running", checkpoint: "first" }),
    ]);
    await commitAll(storage, [
      w.setText(4, "b"),
      w.task(8, 1, { status: "running", checkpoint: "second" }),
    ]);
    await storage.close();
    for (const name of ["doc-4.jsonl", "task-8.jsonl"]) {
      const text = readFileSync(file(name), "utf8").split("\n").slice(0, -1);
      writeFileSync(file(name), text.map((l) => `${asFormat1(l)}\n`).join(""));
    }
    expect(existsSync(file("CURRENT"))).toBe(false);
    const old = await openJsonlStorage(dir.path);
    expect(old.generation).toBe(0);
    await old.compact();
    await old.close();
    expect(readdirSync(dir.path).sort()).toEqual(["CURRENT", "gen-1"]);
    // The copied history keeps its format-1 lines; they are read as before.
    expect(readFileSync(file("gen-1/doc-4.jsonl"), "utf8")).toMatch(
      /^\{"format":1,"type":"record","seq":1,"ordinal":0,/,
    );
    const reopened = await openJsonlStorage(dir.path);
    expect((await reopened.document(4 as DocumentId, 1 as Seq))?.value).toEqual({ text: "a" });
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({ text: "b" });
    expect((await reopened.task(8 as TaskId))?.state).toEqual({
      status: "running",
      checkpoint: "second",
    });
    await reopened.close();
  });
});

describe("recovery inside a generation", () => {
  it("a torn final marker of a generation's tail is cut and kept in the storage's recovered/, named from the storage directory", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.entry(2, 1, "before")]);
    await storage.compact();
    await commitAll(storage, [w.entry(3, 1, "in the tail")]);
    await storage.close();
    appendFileSync(file("gen-1/main.jsonl"), '{"format":1,"type":"commit","seq":3,"wri');
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery.truncated).toEqual([
      {
        file: "gen-1/main.jsonl",
        bytes: 40,
        savedAs: expect.stringMatching(/^recovered\/.*-main\.jsonl$/) as unknown,
      },
    ]);
    const saved = reopened.recovery.truncated[0]?.savedAs as string;
    expect(readFileSync(file(saved), "utf8")).toBe('{"format":1,"type":"commit","seq":3,"wri');
    expect((await reopened.entry(3 as EntryId))?.entry.data).toBe("in the tail");
    await reopened.close();
  });
});

describe("reopen of a compacted storage", () => {
  it("reads only the current generation, every file in ranges of at most 1 MiB, never whole", async () => {
    const storage = await openJsonlStorage(dir.path, { compaction: false });
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    const filler = "x".repeat(4096);
    for (let call = 0; call < 10; call++)
      await commitAll(
        storage,
        Array.from({ length: 100 }, (_, b) => w.entry(100 + call * 100 + b, 1, filler)),
        [w.setText(4, filler.repeat(8) + String(call))],
      );
    await storage.compact();
    await storage.close();
    expect(statSync(file("gen-1/snapshot.jsonl")).size).toBeGreaterThan(3 * 1024 * 1024);
    const reads: { path: string; length: number | "whole" }[] = [];
    const fs: FileSystem = {
      ...nodeFileSystem,
      read(path, range) {
        reads.push({ path: path.slice(dir.path.length + 1), length: range?.length ?? "whole" });
        return nodeFileSystem.read(path, range);
      },
    };
    const reopened = await openJsonlStorage(dir.path, { fs });
    expect(reads.filter((r) => r.length === "whole")).toEqual([]);
    expect(Math.max(...reads.map((r) => r.length as number))).toBeLessThanOrEqual(1024 * 1024);
    expect(new Set(reads.map((r) => r.path))).toEqual(
      new Set(["CURRENT", "gen-1/snapshot.jsonl", "gen-1/main.jsonl", "gen-1/doc-4.jsonl"]),
    );
    expect((await reopened.entry(1099 as EntryId))?.entry.data).toBe(filler);
    await reopened.close();
  });
});
