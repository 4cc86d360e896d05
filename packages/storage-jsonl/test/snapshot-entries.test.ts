import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import {
  StorageCorrupted,
  type ConversationId,
  type EntryId,
  type EntryRecord,
} from "@durably/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { nodeFileSystem, openJsonlStorage, type JsonlStorage } from "../src/index.js";
import { loadSnapshot } from "../src/snapshot-reader.js";
import { commitAll, w } from "./support/records.js";
import { tempDir } from "./support/temp-dir.js";

/*
 * The entries of a snapshot are kept as their checked lines at open and
 * parsed again on their first read: every check still runs at open, a
 * read gives what was committed, and a compaction copies lines never read.
 */

let dir: { path: string; remove(): void };
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const file = (name: string) => join(dir.path, name);

const entry = (id: number, conversationId: number, data: string, head?: number): EntryRecord => ({
  id: id as EntryId,
  conversationId: conversationId as ConversationId,
  kind: "note",
  data: { text: data, n: id, nested: [1, { ü: "ünïcödé ✓" }] },
  ...(head === undefined ? {} : { head: head as EntryId }),
});

/** Entries in two conversations, some carrying a head: committed, compacted into generation 1. */
const ENTRIES = [
  entry(10, 1, "one"),
  entry(11, 2, "two"),
  entry(12, 1, "three", 10),
  entry(13, 2, "four"),
  entry(14, 1, "five"),
  entry(15, 2, "six", 13),
  entry(16, 1, "seven"),
];

async function compacted(): Promise<Map<number, number>> {
  const storage = await openJsonlStorage(dir.path, { compaction: false });
  await commitAll(storage, [w.conversation(1), w.conversation(2)]);
  const seqs = new Map<number, number>();
  for (const e of ENTRIES) {
    const [seq] = await commitAll(storage, [{ type: "entry", value: e }]);
    seqs.set(e.id, seq as number);
  }
  await storage.compact();
  await storage.close();
  return seqs;
}

/** Every entry as the storage reads it: by id, by scan and the latest heads. */
async function readBack(storage: JsonlStorage) {
  const byId = [];
  for (const e of ENTRIES) byId.push(await storage.entry(e.id));
  const scan = async (c: number) =>
    (await storage.scanEntries({ conversationId: c as ConversationId }, 100)).items;
  return {
    byId,
    scans: [await scan(1), await scan(2)],
    heads: [
      await storage.latestHead(1 as ConversationId),
      await storage.latestHead(2 as ConversationId),
    ],
  };
}

function expected(seqs: Map<number, number>) {
  // A scan gives the newest first.
  const of = (c: number) => ENTRIES.filter((e) => e.conversationId === c).reverse();
  return {
    byId: ENTRIES.map((e) => ({ entry: e, commitSeq: seqs.get(e.id) })),
    scans: [of(1), of(2)],
    heads: [ENTRIES[2], ENTRIES[5]],
  };
}

/** The lines of a generation's snapshot that hold entries. */
function entryLines(generation: number): string[] {
  return readFileSync(file(`gen-${generation}/snapshot.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.startsWith('{"type":"entry"'));
}

function withCrc(json: string): string {
  return `${json.slice(0, -1)},"crc":${crc32(json)}}`;
}

/** Replaces line `n` (1-based) of generation 1's snapshot. */
function replaceLine(n: number, text: string): void {
  const path = file("gen-1/snapshot.jsonl");
  const lines = readFileSync(path, "utf8").split("\n");
  lines[n - 1] = text;
  writeFileSync(path, lines.join("\n"));
}

/** Line number (1-based) of entry `id` in generation 1's snapshot. */
function lineOf(id: number): number {
  const lines = readFileSync(file("gen-1/snapshot.jsonl"), "utf8").split("\n");
  return (
    lines.findIndex((l) => l.startsWith(`{"type":"entry","seq":`) && l.includes(`"id":${id},`)) + 1
  );
}

describe("snapshot entries kept as their lines until read", () => {
  it("open keeps each entry as the text of its snapshot line; reads give what was committed", async () => {
    const seqs = await compacted();
    const loaded = await loadSnapshot(nodeFileSystem, file("gen-1"), "gen-1/snapshot.jsonl", 1);
    const lines = entryLines(1);
    expect(lines).toHaveLength(ENTRIES.length);
    expect(ENTRIES.map((e) => loaded.state.entries.stored(e.id))).toEqual(lines);
    const storage = await openJsonlStorage(dir.path, { compaction: false });
    expect(await readBack(storage)).toEqual(expected(seqs));
    await storage.close();
  });

  it("a compaction copies the lines of entries never read as they are, and writes read ones anew", async () => {
    const seqs = await compacted();
    const before = entryLines(1);
    // Entries 12 (read below) and 13 (never read) written with a space: valid lines, not as this writer writes them.
    for (const id of [12, 13]) {
      const value = ENTRIES.find((e) => e.id === id) as EntryRecord;
      replaceLine(
        lineOf(id),
        withCrc(`{"type":"entry","seq":${seqs.get(id)},"value": ${JSON.stringify(value)}}`),
      );
    }
    const spaced = entryLines(1);
    expect(spaced).not.toEqual(before);
    const storage = await openJsonlStorage(dir.path, { compaction: false });
    // Half read (revived), half never read.
    for (const e of ENTRIES.filter((_, i) => i % 2 === 0)) await storage.entry(e.id);
    await storage.compact();
    expect(storage.generation).toBe(2);
    expect(await readBack(storage)).toEqual(expected(seqs));
    await storage.close();
    // 13 is copied with its space; 12 was revived and is written as the writer writes it.
    expect(entryLines(2)).toEqual(before.map((line, i) => (i === 3 ? spaced[3] : line)));
    const reopened = await openJsonlStorage(dir.path, { compaction: false });
    expect(await readBack(reopened)).toEqual(expected(seqs));
    await reopened.close();
  });

  it("an entry line that is not JSON is StorageCorrupted at open, naming the snapshot and the line", async () => {
    await compacted();
    const n = lineOf(13);
    replaceLine(n, '{"type":"entry","seq":5,"value":{"id":13,,"crc":1}');
    const error = await openJsonlStorage(dir.path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect((error as StorageCorrupted).message).toMatch(
      new RegExp(`^gen-1/snapshot\\.jsonl line ${n}: not valid JSON`),
    );
    expect((error as StorageCorrupted).location).toMatchObject({
      file: "gen-1/snapshot.jsonl",
      line: n,
    });
  });

  it("an entry line with a right checksum but a malformed entry is StorageCorrupted at open, naming the line", async () => {
    const seqs = await compacted();
    const n = lineOf(13);
    const { conversationId: _, ...noConversation } = ENTRIES[3] as EntryRecord;
    replaceLine(
      n,
      withCrc(JSON.stringify({ type: "entry", seq: seqs.get(13), value: noConversation })),
    );
    const error = await openJsonlStorage(dir.path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageCorrupted);
    expect((error as StorageCorrupted).location).toMatchObject({
      file: "gen-1/snapshot.jsonl",
      line: n,
    });
  });

  it("an entry line whose checksum fails is StorageCorrupted at open, whichever way it is laid out", async () => {
    const seqs = await compacted();
    for (const id of [13, 15]) {
      // 13 is indexed from its text, 15 (a head) decoded whole.
      const n = lineOf(id);
      const line = readFileSync(file("gen-1/snapshot.jsonl"), "utf8").split("\n")[n - 1] as string;
      replaceLine(n, line.replace(`"n":${id}`, `"n":${id + 1}`));
      const error = await openJsonlStorage(dir.path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as StorageCorrupted).message).toMatch(
        new RegExp(`^gen-1/snapshot\\.jsonl line ${n}: checksum mismatch`),
      );
      replaceLine(n, line);
    }
    const storage = await openJsonlStorage(dir.path, { compaction: false });
    expect(await readBack(storage)).toEqual(expected(seqs));
    await storage.close();
  });
});

describe("an entry line that verifies but does not decode (only a faulty writer makes one)", () => {
  const lines = (seq: number): Record<string, string> => ({
    "not JSON": `{"type":"entry","seq":${seq},"value":{"id":13,"conversationId":2,"kind":"note","data":]}`,
    "no kind": `{"type":"entry","seq":${seq},"value":{"id":13,"conversationId":2,"data":"x"}}`,
    "a second conversationId": `{"type":"entry","seq":${seq},"value":{"id":13,"conversationId":2,"kind":"note","conversationId":1}}`,
    "a head its text hides": `{"type":"entry","seq":${seq},"value":{"id":13,"conversationId":2,"kind":"note","\\u0068ead":11}}`,
  });
  for (const name of Object.keys(lines(1)))
    it(`${name}: open goes on; reading the entry, scanning its conversation and compacting are StorageCorrupted naming the line`, async () => {
      const seqs = await compacted();
      const n = lineOf(13);
      replaceLine(n, withCrc(lines(seqs.get(13) as number)[name] as string));
      const storage = await openJsonlStorage(dir.path, { compaction: false });
      const failures = [
        await storage.entry(13 as EntryId).catch((e: unknown) => e),
        await storage
          .scanEntries({ conversationId: 2 as ConversationId }, 100)
          .catch((e: unknown) => e),
        await storage.compact().catch((e: unknown) => e),
      ];
      for (const error of failures) {
        expect(error).toBeInstanceOf(StorageCorrupted);
        expect((error as StorageCorrupted).message).toMatch(
          new RegExp(`^gen-1/snapshot\\.jsonl line ${n}: `),
        );
        expect((error as StorageCorrupted).location).toEqual({
          file: "gen-1/snapshot.jsonl",
          line: n,
        });
      }
      // The compaction failed before its switch: the storage goes on in generation 1.
      expect(storage.generation).toBe(1);
      expect(await storage.entry(12 as EntryId)).toEqual({
        entry: ENTRIES[2],
        commitSeq: seqs.get(12),
      });
      expect(
        (await storage.scanEntries({ conversationId: 1 as ConversationId }, 100)).items,
      ).toEqual(expected(seqs).scans[0]);
      await commitAll(storage, [w.entry(20, 1, "after")]);
      await storage.close();
    });
});
