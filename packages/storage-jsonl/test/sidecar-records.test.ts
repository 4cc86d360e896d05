import { crc32 } from "node:zlib";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import {
  StorageVersionError,
  type DocumentId,
  type EntryId,
  type TaskId,
  type TaskRecord,
} from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { encodeRecord, type RecordPayload } from "../src/line-format.js";
import { matching } from "./support/matching.js";
import { commitAll, w } from "./support/records.js";
import { directoryPerTest, openFails } from "./support/test-directory.js";

const dir = directoryPerTest();
const { file, lines, writeLines } = dir;

const running = (checkpoint: string) => ({ status: "running" as const, checkpoint });

/** A line as a format-1 writer wrote it: no `call`, its own checksum. */
function asFormat1(line: string): string {
  const json = line
    .replace(/,"crc":[0-9]+\}$/, "}")
    .replace('{"format":2,', '{"format":1,')
    .replace(/,"call":[0-9]+/, "");
  return `${json.slice(0, -1)},"crc":${crc32(json)}}`;
}

// That reads before and after reopen give the last value is a persistence rule of the shared
// storage suite (storage-conformance.test.ts); here, what the sidecar holds.
describe("sidecar records > live task replacements", () => {
  for (const shape of ["one batch", "two batches"] as const)
    it(`a task replaced twice in one commit call (${shape}) appends one record per write to its sidecar`, async () => {
      const storage = await openJsonlStorage(dir.path);
      await commitAll(storage, [w.conversation(1), w.task(8, 1, running("first"))]);
      const [second, third] = [w.task(8, 1, running("second")), w.task(8, 1, running("third"))];
      if (shape === "one batch") await commitAll(storage, [second, third]);
      else await commitAll(storage, [second], [third]);
      await storage.close();
      const records = lines("task-8.jsonl").map(
        (line) => (JSON.parse(line) as { payload: { value: TaskRecord } }).payload.value.state,
      );
      expect(records).toEqual([running("first"), running("second"), running("third")]);
    });
});

describe("sidecar records > confirmed records must be exactly what the markers list", () => {
  it("a checksummed record with an ordinal no marker lists, before a confirmed one, fails naming its line", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.task(8, 1, running("first"))]);
    await commitAll(storage, [w.task(8, 1, running("second"))]);
    await storage.close();
    const [first, second] = lines("task-8.jsonl") as [string, string];
    // A well-formed record of seq 2 with ordinal 5, which marker 2 does not list, before the listed one.
    const payload = (JSON.parse(second) as { payload: RecordPayload }).payload;
    const unlisted = encodeRecord({ seq: 2, call: 2, ordinal: 5, payload }).trimEnd();
    writeLines("task-8.jsonl", [first, unlisted, second]);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "task-8.jsonl", line: 2 });
    expect(error.message).toMatch(
      /record \(seq 2, ordinal 5\) is not confirmed by any marker in main\.jsonl/,
    );
  });

  it("a confirmed base whose record has no value fails naming its line", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "a" })]);
    await storage.close();
    const payload = {
      type: "document",
      id: 4,
      content: { kind: "base", version: 1 },
    } as unknown as RecordPayload;
    writeLines("doc-4.jsonl", [encodeRecord({ seq: 1, call: 1, ordinal: 0, payload }).trimEnd()]);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 1 });
    expect(error.message).toMatch(/base content: missing field "value"/);
  });

  it("a confirmed base whose record is gone (an empty file) fails naming the record and its marker", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "a" })]);
    await storage.close();
    writeFileSync(file("doc-4.jsonl"), "");
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 1 });
    expect(error.message).toMatch(
      /record \(seq 1, ordinal 0\) confirmed by main\.jsonl line 1 is missing/,
    );
  });

  it("a record format newer than this version fails with a StorageVersionError as its cause", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "a" })]);
    await storage.close();
    const payload = (JSON.parse(lines("doc-4.jsonl")[0] as string) as { payload: RecordPayload })
      .payload;
    const json = `{"format":3,"type":"record","seq":1,"call":1,"ordinal":0,"payload":${JSON.stringify(payload)}}`;
    writeLines("doc-4.jsonl", [`${json.slice(0, -1)},"crc":${crc32(json)}}`]);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 1 });
    expect(error.message).toMatch(/format 3 is not understood by this version/);
    expect(error.cause).toBeInstanceOf(StorageVersionError);
  });
});

describe("sidecar records > files no marker names are evidence", () => {
  it("a malformed sidecar no marker names is moved aside and reported, never deleted", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.entry(5, 1, "kept")]);
    await storage.close();
    writeFileSync(file("doc-77.jsonl"), "not a record\n");
    writeFileSync(file("task-78.jsonl"), "");
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery.setAside).toEqual([
      {
        file: "doc-77.jsonl",
        savedAs: matching(/^recovered\/.+-doc-77\.jsonl$/),
        reason: matching(/no marker names it, and line 1: not valid JSON/),
      },
      {
        file: "task-78.jsonl",
        savedAs: matching(/^recovered\/.+-task-78\.jsonl$/),
        reason: matching(/no marker names it/),
      },
    ]);
    expect((await reopened.entry(5 as EntryId))?.entry.data).toBe("kept");
    await reopened.close();
    expect(readdirSync(dir.path)).not.toContain("doc-77.jsonl");
    const saved = reopened.recovery.setAside[0]?.savedAs as string;
    expect(readFileSync(file(saved), "utf8")).toBe("not a record\n");
  });
});

describe("sidecar records > format 1 (no call) is still read", () => {
  it("a directory whose sidecar records are format 1 opens, reads its history and takes new commits", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [
      w.conversation(1),
      w.createDoc(4, 1, { text: "a" }, "rewindable"),
      w.task(8, 1, running("first")),
    ]);
    await commitAll(storage, [w.setText(4, "b"), w.task(8, 1, running("second"))]);
    await storage.close();
    for (const name of ["doc-4.jsonl", "task-8.jsonl"])
      writeLines(name, lines(name).map(asFormat1));
    expect(lines("doc-4.jsonl")[0]).toMatch(/^\{"format":1,"type":"record","seq":1,"ordinal":0,/);
    const reopened = await openJsonlStorage(dir.path);
    expect((await reopened.document(4 as DocumentId, 1 as never))?.value).toEqual({ text: "a" });
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({ text: "b" });
    expect((await reopened.task(8 as TaskId))?.state).toEqual(running("second"));
    await commitAll(reopened, [w.setText(4, "c")]);
    await reopened.close();
    expect(lines("doc-4.jsonl")[2]).toMatch(/^\{"format":2,"type":"record","seq":3,"call":3,/);
    const again = await openJsonlStorage(dir.path);
    expect((await again.document(4 as DocumentId, 2 as never))?.value).toEqual({ text: "b" });
    expect((await again.document(4 as DocumentId, "current"))?.value).toEqual({ text: "c" });
    await again.close();
  });

  it("an unconfirmed format-1 tail cannot name its call: it is cut and kept aside as before", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "a" }, "rewindable")]);
    await commitAll(storage, [w.setText(4, "b")]);
    await storage.close();
    writeLines("doc-4.jsonl", lines("doc-4.jsonl").map(asFormat1));
    writeLines("main.jsonl", lines("main.jsonl").slice(0, 1));
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery.truncated.map((t) => t.file)).toEqual(["doc-4.jsonl"]);
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({ text: "a" });
    await reopened.close();
  });
});
