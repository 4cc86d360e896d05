import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { crc32 } from "node:zlib";
import { StorageCorrupted, StorageVersionError, type DocumentId } from "@durably/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { commitAll, w } from "./support/records.js";
import { tempDir } from "./support/temp-dir.js";

let dir: { path: string; remove(): void };
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const file = (name: string) => join(dir.path, name);

/** Every file under the storage directory with its bytes, to prove a failed open changed nothing. */
function contents(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name !== "LOCK") found.set(relative(dir.path, path), readFileSync(path, "latin1"));
    }
  };
  walk(dir.path);
  return found;
}

/** A compacted storage (generation 1) with a conversation, entries and a rewindable document, plus a tail. */
async function compacted(): Promise<void> {
  const storage = await openJsonlStorage(dir.path);
  await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "a" }, "rewindable")]);
  await commitAll(storage, [w.entry(5, 1, "hello"), w.setText(4, "b")]);
  await storage.compact();
  await commitAll(storage, [w.entry(6, 1, "after"), w.setText(4, "c")]);
  await storage.close();
}

/** Opens, expecting StorageCorrupted, and checks that not one byte of the directory changed. */
async function openFailsTouchingNothing(): Promise<StorageCorrupted> {
  const before = contents();
  const error: unknown = await openJsonlStorage(dir.path).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageCorrupted);
  expect(contents()).toEqual(before);
  return error as StorageCorrupted;
}

function withCrc(json: string): string {
  return `${json.slice(0, -1)},"crc":${crc32(json)}}\n`;
}

describe("bad input in a compacted storage", () => {
  it("a snapshot line whose CRC fails is StorageCorrupted naming the snapshot file and line", async () => {
    await compacted();
    const path = file("gen-1/snapshot.jsonl");
    const lines = readFileSync(path, "utf8").split("\n");
    lines[2] = (lines[2] as string).replace('"hello"', '"jello"');
    writeFileSync(path, lines.join("\n"));
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(/^gen-1\/snapshot\.jsonl line 3: checksum mismatch/);
    expect(error.location).toMatchObject({ file: "gen-1/snapshot.jsonl", line: 3 });
  });

  it("a snapshot cut short at a line boundary is StorageCorrupted (its end line is missing)", async () => {
    await compacted();
    const path = file("gen-1/snapshot.jsonl");
    const lines = readFileSync(path, "utf8").split("\n").slice(0, -2);
    writeFileSync(path, `${lines.join("\n")}\n`);
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(
      /gen-1\/snapshot\.jsonl line \d+: the snapshot ends before its end line/,
    );
  });

  it("a pointer naming a missing generation is StorageCorrupted naming CURRENT and the missing snapshot", async () => {
    await compacted();
    writeFileSync(file("CURRENT"), withCrc(`{"format":3,"generation":7}`));
    const error = await openFailsTouchingNothing();
    expect(error.message).toBe("CURRENT names generation 7, but gen-7/snapshot.jsonl is missing");
    // The generation that was current is still whole: restoring the pointer opens it.
    writeFileSync(file("CURRENT"), withCrc(`{"format":3,"generation":1}`));
    const storage = await openJsonlStorage(dir.path);
    expect((await storage.document(4 as DocumentId, "current"))?.value).toEqual({ text: "c" });
    await storage.close();
  });

  it("a damaged pointer is StorageCorrupted naming CURRENT", async () => {
    await compacted();
    writeFileSync(file("CURRENT"), `{"format":3,"generation":2,"crc":1}\n`);
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(/^CURRENT: checksum mismatch/);
    expect(error.location).toEqual({ file: "CURRENT" });
  });

  it("a lost pointer (generations but neither CURRENT nor main.jsonl) is StorageCorrupted, nothing removed", async () => {
    await compacted();
    unlinkSync(file("CURRENT"));
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(/^CURRENT is missing, but gen-1 exists/);
  });

  it("a generation of a newer format is StorageCorrupted caused by StorageVersionError, naming the file", async () => {
    await compacted();
    const path = file("gen-1/snapshot.jsonl");
    const lines = readFileSync(path, "utf8").split("\n");
    lines[0] = withCrc(`{"format":4,"type":"snapshot","generation":1,"seq":2,"ids":5}`).trimEnd();
    writeFileSync(path, lines.join("\n"));
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(
      /^gen-1\/snapshot\.jsonl line 1: format 4 is not understood by this version/,
    );
    expect(error.cause).toBeInstanceOf(StorageVersionError);
  });

  it("a pointer of a newer format is StorageCorrupted caused by StorageVersionError", async () => {
    await compacted();
    writeFileSync(file("CURRENT"), withCrc(`{"format":4,"generation":1}`));
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(/^CURRENT: format 4 is not understood/);
    expect(error.cause).toBeInstanceOf(StorageVersionError);
  });

  it("a damaged record of a copied document file is StorageCorrupted naming gen-1/doc-4.jsonl and its line", async () => {
    await compacted();
    const path = file("gen-1/doc-4.jsonl");
    const lines = readFileSync(path, "utf8").split("\n");
    lines[0] = (lines[0] as string).replace('"a"', '"z"');
    writeFileSync(path, lines.join("\n"));
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(/^gen-1\/doc-4\.jsonl line 1: checksum mismatch/);
    expect(error.location).toMatchObject({ file: "gen-1/doc-4.jsonl", line: 1 });
  });

  it("a copied document file that is missing is StorageCorrupted naming it and the snapshot line confirming it", async () => {
    await compacted();
    unlinkSync(file("gen-1/doc-4.jsonl"));
    const error = await openFailsTouchingNothing();
    expect(error.message).toMatch(
      /^gen-1\/doc-4\.jsonl line 1: the file is missing, but gen-1\/snapshot\.jsonl line \d+ confirms its record \(seq 1, ordinal 0\)/,
    );
  });

  it("a stray file inside a superseded generation is moved into recovered/, never deleted", async () => {
    await compacted();
    const storage = await openJsonlStorage(dir.path);
    await storage.compact();
    await storage.close();
    // An old generation whose removal was interrupted, holding a file no generation writes.
    mkdirSync(file("gen-1"));
    writeFileSync(file("gen-1/notes.txt"), "mine");
    writeFileSync(file("gen-1/main.jsonl"), "");
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery.setAside.map((s) => s.file)).toEqual(["gen-1/notes.txt"]);
    expect(reopened.recovery.setAside[0]?.savedAs).toMatch(/^recovered\/.*gen-1-notes\.txt$/);
    expect(reopened.recovery.removed).toContain("gen-1/main.jsonl");
    const saved = reopened.recovery.setAside[0]?.savedAs as string;
    expect(readFileSync(file(saved), "utf8")).toBe("mine");
    expect(readdirSync(dir.path).sort()).toEqual(["CURRENT", "LOCK", "gen-2", "recovered"]);
    await reopened.close();
  });
});
