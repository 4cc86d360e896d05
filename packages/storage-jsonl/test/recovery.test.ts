import {
  appendFileSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import {
  StorageVersionError,
  type DocumentId,
  type EntryId,
  type Seq,
  type TaskId,
} from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { matching } from "./support/matching.js";
import { commitAll, w } from "./support/records.js";
import { directoryPerTest, openFails } from "./support/test-directory.js";

const dir = directoryPerTest();
const { file, lines, rewrite } = dir;

/** Two saves, each appending a note and changing a rewindable document (the demo's seed experiment). */
async function twoSaves(): Promise<void> {
  const storage = await openJsonlStorage(dir.path);
  await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
  await commitAll(storage, [w.entry(5, 1, "hello"), w.setText(4, "after hello")]);
  await commitAll(storage, [w.entry(6, 1, "goodbye"), w.setText(4, "after goodbye")]);
  await storage.close();
}

describe("recovery > torn final marker", () => {
  it("cutting the last line of main.jsonl in half drops that whole save and keeps the earlier one", async () => {
    await twoSaves();
    const text = readFileSync(file("main.jsonl"), "utf8");
    const lastStart = text.lastIndexOf("\n", text.length - 2) + 1;
    truncateSync(file("main.jsonl"), lastStart + Math.floor((text.length - lastStart) / 2));
    const torn = readFileSync(file("main.jsonl")).subarray(lastStart);
    const storage = await openJsonlStorage(dir.path);
    expect(storage.recovery.tornMarkerBytes).toBe(torn.length);
    // The torn marker and the save's sidecar record (confirmed by nothing) are cut, and kept aside.
    expect(storage.recovery.truncated.map((t) => t.file)).toEqual(["main.jsonl", "doc-4.jsonl"]);
    const [mainCut] = storage.recovery.truncated;
    expect(readFileSync(file(mainCut?.savedAs as string))).toEqual(torn);
    expect(await storage.entry(6 as EntryId)).toBeUndefined();
    expect((await storage.entry(5 as EntryId))?.commitSeq).toBe(2);
    expect((await storage.document(4 as DocumentId, "current"))?.value).toEqual({
      text: "after hello",
    });
    // The storage goes on from the earlier save: the next commit takes seq 3 and survives reopen.
    expect(await commitAll(storage, [w.entry(7, 1, "again"), w.setText(4, "again")])).toEqual([3]);
    await storage.close();
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery).toEqual({
      commits: 3,
      tornMarkerBytes: 0,
      truncated: [],
      setAside: [],
      removed: [],
      deferred: [],
    });
    expect((await reopened.document(4 as DocumentId, 2 as Seq))?.value).toEqual({
      text: "after hello",
    });
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({ text: "again" });
    await reopened.close();
  });

  it("a sidecar record whose marker never landed is cut, complete or torn, and kept aside with a file no marker names", async () => {
    await twoSaves();
    const storage0 = await openJsonlStorage(dir.path);
    // The next call's records (seq 4, one call), then its markers never land: a crash.
    await commitAll(storage0, [
      w.entry(7, 1, "lost"),
      w.setText(4, "lost"),
      w.createDoc(9, 1, { text: "new" }),
    ]);
    await storage0.close();
    const lost = lines("doc-4.jsonl")[3] as string;
    rewrite("main.jsonl", (l) => l.slice(0, 3));
    appendFileSync(file("doc-4.jsonl"), lost.slice(0, 20));
    const before = readFileSync(file("doc-4.jsonl"));
    const doc9 = readFileSync(file("doc-9.jsonl"));
    const storage = await openJsonlStorage(dir.path);
    const cutAt = before.length - Buffer.byteLength(lost) - 1 - 20;
    expect(storage.recovery.truncated).toEqual([
      {
        file: "doc-4.jsonl",
        bytes: before.length - cutAt,
        savedAs: matching(/^recovered\/.*-doc-4\.jsonl$/),
      },
    ]);
    expect(storage.recovery.setAside).toEqual([
      {
        file: "doc-9.jsonl",
        savedAs: matching(/^recovered\/.*-doc-9\.jsonl$/),
        reason: matching(/no marker names it/),
      },
    ]);
    expect(storage.recovery.removed).toEqual([]);
    expect((await storage.document(4 as DocumentId, "current"))?.value).toEqual({
      text: "after goodbye",
    });
    expect(await storage.entry(7 as EntryId)).toBeUndefined();
    await storage.close();
    // Nothing is deleted: the cut bytes and the whole file are in recovered/.
    expect(readdirSync(dir.path)).not.toContain("doc-9.jsonl");
    expect(readFileSync(file(storage.recovery.truncated[0]?.savedAs as string))).toEqual(
      before.subarray(cutAt),
    );
    expect(readFileSync(file(storage.recovery.setAside[0]?.savedAs as string))).toEqual(doc9);
    expect(statSync(file("doc-4.jsonl")).size).toBe(cutAt);
  });
});

describe("recovery > corruption fails open naming file and line", () => {
  it("a flipped byte in a committed marker (still valid JSON) is caught by its checksum", async () => {
    await twoSaves();
    rewrite("main.jsonl", (l) =>
      l.map((line, i) => (i === 1 ? line.replace('"hello"', '"hellp"') : line)),
    );
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 2 });
    expect(error.message).toMatch(/main\.jsonl line 2: checksum mismatch/);
  });

  it("a flipped byte in a committed sidecar record is caught", async () => {
    await twoSaves();
    rewrite("doc-4.jsonl", (l) =>
      l.map((line, i) => (i === 1 ? line.replace("after hello", "after jello") : line)),
    );
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 2 });
  });

  it("lines with non-ASCII text verify byte for byte: they reopen intact, and a changed byte is caught", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    await commitAll(storage, [w.entry(5, 1, "héllo wörld ✓ 𝄞"), w.setText(4, "ünïcode ✓")]);
    await commitAll(storage, [w.entry(6, 1, "plain"), w.setText(4, "plain")]);
    await storage.close();
    const reopened = await openJsonlStorage(dir.path);
    expect((await reopened.entry(5 as EntryId))?.entry.data).toBe("héllo wörld ✓ 𝄞");
    expect((await reopened.document(4 as DocumentId, 2 as Seq))?.value).toEqual({
      text: "ünïcode ✓",
    });
    await reopened.close();
    // One character for another of the same UTF-8 length: the lines keep their byte offsets.
    rewrite("doc-4.jsonl", (l) => l.map((line, i) => (i === 1 ? line.replace("ü", "ö") : line)));
    let error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 2 });
    expect(error.message).toMatch(/checksum mismatch/);
    rewrite("doc-4.jsonl", (l) => l.map((line, i) => (i === 1 ? line.replace("ö", "ü") : line)));
    rewrite("main.jsonl", (l) => l.map((line, i) => (i === 1 ? line.replace("✓", "✗") : line)));
    error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 2 });
    expect(error.message).toMatch(/checksum mismatch/);
  });

  it("a flipped byte in the final, complete marker is corruption, not a torn write", async () => {
    await twoSaves();
    rewrite("main.jsonl", (l) =>
      l.map((line, i) => (i === 2 ? line.replace('"goodbye"', '"goodbyf"') : line)),
    );
    expect((await openFails(dir.path)).location).toEqual({ file: "main.jsonl", line: 3 });
  });

  it("a truncated middle line (later lines intact) fails", async () => {
    await twoSaves();
    rewrite("main.jsonl", (l) =>
      l.map((line, i) => (i === 1 ? line.slice(0, line.length >> 1) : line)),
    );
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 2 });
    expect(error.message).toMatch(/not valid JSON/);
  });

  it("an unknown format version fails, with a StorageVersionError as its cause", async () => {
    await twoSaves();
    rewrite("main.jsonl", (l) =>
      l.map((line, i) => (i === 1 ? line.replace('{"format":1,', '{"format":2,') : line)),
    );
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 2 });
    expect(error.message).toMatch(/format 2 is not understood/);
    expect(error.cause).toBeInstanceOf(StorageVersionError);
  });

  it("a missing confirmed sidecar record fails (deleted line, deleted file)", async () => {
    await twoSaves();
    const saved = readFileSync(file("doc-4.jsonl"));
    rewrite("doc-4.jsonl", (l) => [l[0] as string, l[2] as string]);
    let error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 2 });
    expect(error.message).toMatch(
      /record \(seq 2, ordinal 0\) confirmed by main\.jsonl line 2 is missing/,
    );
    unlinkSync(file("doc-4.jsonl"));
    error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-4.jsonl", line: 1 });
    writeFileSync(file("doc-4.jsonl"), saved);
    const storage = await openJsonlStorage(dir.path);
    await storage.close();
  });

  it("a sidecar record line inside main.jsonl is reported as misplaced, not as an unknown format", async () => {
    await twoSaves();
    const record = lines("doc-4.jsonl")[1] as string;
    rewrite("main.jsonl", (l) => [l[0] as string, record, ...l.slice(1)]);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 2 });
    expect(error.message).toMatch(/main\.jsonl line 2: type "record" where a commit line belongs/);
  });

  it("a marker whose seq is not above the previous one fails", async () => {
    await twoSaves();
    rewrite("main.jsonl", (l) => [...l, l[2] as string]);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 4 });
    expect(error.message).toMatch(/marker seq 3 is not above seq 3/);
  });

  it("a missing main.jsonl next to sidecar files fails instead of discarding them", async () => {
    await twoSaves();
    unlinkSync(file("main.jsonl"));
    expect((await openFails(dir.path)).message).toMatch(
      /main\.jsonl is missing but doc-4\.jsonl exists/,
    );
  });
});

describe("reclamation", () => {
  it("after a committed base a current-only document's file keeps only the base; older history reads reject", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" })]);
    for (let i = 0; i < 5; i++) await commitAll(storage, [w.setText(4, `step ${i}`)]);
    await commitAll(storage, [w.base(4, { text: "fresh" })]);
    await commitAll(storage, [w.setText(4, "after base")]);
    expect(lines("doc-4.jsonl").length).toBe(2);
    expect((await storage.document(4 as DocumentId, 7 as Seq))?.value).toEqual({ text: "fresh" });
    await expect(storage.document(4 as DocumentId, 6 as Seq)).rejects.toMatchObject({
      reason: "history-unavailable",
    });
    await storage.close();
    const reopened = await openJsonlStorage(dir.path);
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({
      text: "after base",
    });
    expect((await reopened.document(4 as DocumentId, 7 as Seq))?.value).toEqual({ text: "fresh" });
    await reopened.close();
  });

  it("rewindable history is never reclaimed: every revision stays readable from the file", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "v1" }, "rewindable")]);
    await commitAll(storage, [w.base(4, { text: "v2" })]);
    await commitAll(storage, [w.base(4, { text: "v3" })]);
    await commitAll(storage, [w.retire(4)]);
    await storage.close();
    expect(lines("doc-4.jsonl").length).toBe(3);
    const reopened = await openJsonlStorage(dir.path);
    for (const [seq, text] of [
      [1, "v1"],
      [2, "v2"],
      [3, "v3"],
    ] as const)
      expect((await reopened.document(4 as DocumentId, seq as Seq))?.value).toEqual({ text });
    await reopened.close();
  });

  it("a retired current-only document's file and a terminal task's file are removed; the task stays readable", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [
      w.conversation(1),
      w.createDoc(4, 1, { text: "" }),
      w.task(8, 1, { status: "running", checkpoint: 1 }),
    ]);
    expect(readdirSync(dir.path)).toEqual(expect.arrayContaining(["doc-4.jsonl", "task-8.jsonl"]));
    await commitAll(storage, [
      w.retire(4),
      w.task(8, 1, { status: "terminal", outcome: { kind: "completed" } }),
    ]);
    await storage.commit([], () => undefined); // reclamation runs before the next call
    expect(readdirSync(dir.path)).not.toContain("doc-4.jsonl");
    expect(readdirSync(dir.path)).not.toContain("task-8.jsonl");
    await storage.close();
    const reopened = await openJsonlStorage(dir.path);
    expect((await reopened.task(8 as TaskId))?.state.status).toBe("terminal");
    expect(await reopened.document(4 as DocumentId, "current")).toBeUndefined();
    expect(reopened.recovery.removed).toEqual([]);
    await reopened.close();
  });
});
