import { readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import type { DocumentId, EntryId } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { encodeRecord } from "../src/line-format.js";
import { commitAll, w } from "./support/records.js";
import { directoryPerTest, openFails } from "./support/test-directory.js";

const dir = directoryPerTest();
const { file, lines, rewrite } = dir;
const keepLines = (name: string, count: number) => rewrite(name, (l) => l.slice(0, count));

/** Every file of the directory with its bytes, to show open changed nothing. */
function snapshot(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir.path).sort())
    files[name] = readFileSync(file(name)).toString("base64");
  return files;
}

/**
 * 100 commits, one call each: an entry, a delta to the rewindable document
 * 4 and to the current-only document 3 (a base every `baseEvery` commits,
 * which makes its file worth rewriting).
 */
async function hundredCommits(baseEvery = 0, retireAt = 0): Promise<void> {
  const storage = await openJsonlStorage(dir.path);
  await commitAll(storage, [
    w.conversation(1),
    w.createDoc(3, 1, { text: "" }),
    w.createDoc(4, 1, { text: "" }, "rewindable"),
  ]);
  for (let i = 2; i <= 100; i++)
    await commitAll(storage, [
      w.entry(100 + i, 1, `note ${i}`),
      w.setText(4, `rewindable ${i}`),
      ...(retireAt > 0 && i > retireAt
        ? []
        : [
            i === retireAt
              ? w.retire(3)
              : baseEvery > 0 && i % baseEvery === 0
                ? w.base(3, { text: `base ${i}` })
                : w.setText(3, `current ${i}`),
          ]),
    ]);
  await storage.close();
}

describe("lost markers > a main.jsonl cut at a line boundary", () => {
  it("100 commits with main.jsonl cut to 49 lines: open fails naming main.jsonl and the sidecars that prove it, and changes nothing", async () => {
    await hundredCommits();
    keepLines("main.jsonl", 49);
    const before = snapshot();
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 50 });
    expect(error.message).toMatch(
      /^main\.jsonl line 50: confirmed commit markers are missing: the file ends at seq 49, but records of 51 commit calls lie beyond it: the call from seq 50 \(doc-3\.jsonl line 50\), the call from seq 51 \(doc-3\.jsonl line 51\)/,
    );
    // Nothing truncated, removed or moved: the evidence stays where it is.
    expect(snapshot()).toEqual(before);
  });

  it("the same cut when the current-only document's file was rewritten from a later base names main.jsonl, not the document's file", async () => {
    await hundredCommits(10);
    // The file was rewritten from the base of seq 100: it holds that one record.
    expect(lines("doc-3.jsonl")).toHaveLength(1);
    keepLines("main.jsonl", 49);
    const before = snapshot();
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 50 });
    expect(error.message).toMatch(
      /^main\.jsonl line 50: confirmed commit markers are missing: the file ends at seq 49, but doc-3\.jsonl line 1 starts with a base of seq 100/,
    );
    expect(snapshot()).toEqual(before);
  });

  it("the same cut when the current-only document's file was removed after a later retirement names main.jsonl, not the missing file", async () => {
    await hundredCommits(0, 80);
    expect(readdirSync(dir.path)).not.toContain("doc-3.jsonl");
    keepLines("main.jsonl", 49);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 50 });
    expect(error.message).toMatch(/records of 51 commit calls lie beyond it/);
  });

  it("a removed file with no other sign of lost markers is reported at the file, saying both causes", async () => {
    await hundredCommits();
    unlinkSync(file("doc-3.jsonl"));
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "doc-3.jsonl", line: 1 });
    expect(error.message).toMatch(
      /doc-3\.jsonl line 1: the file is missing, but main\.jsonl line 1 confirms its record \(seq 1, ordinal 0\); it is removed only after a marker makes its document retired, so either the file was deleted or main\.jsonl lost that marker/,
    );
  });

  it("a marker line lost from the middle of main.jsonl fails naming main.jsonl, even with no sidecar record to show it", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1)]);
    for (let i = 2; i <= 5; i++) await commitAll(storage, [w.entry(10 + i, 1, `note ${i}`)]);
    await storage.close();
    rewrite("main.jsonl", (l) => l.filter((_, i) => i !== 2));
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 3 });
    expect(error.message).toMatch(
      /main\.jsonl line 3: marker seq 4 follows seq 2: the markers of seqs 3 to 3 are missing/,
    );
  });

  it("records of the one call after the last marker, when that call's seq is not the next one, fail: the markers between were lost", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    await commitAll(storage, [w.entry(5, 1, "no sidecar record")]); // seq 2
    await commitAll(storage, [w.setText(4, "seq 3")]); // seq 3
    await storage.close();
    keepLines("main.jsonl", 1);
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 2 });
    expect(error.message).toMatch(
      /doc-4\.jsonl line 2 is a record of the call from seq 3, so the markers of seqs 2 to 2 were written before it/,
    );
  });

  it("an unconfirmed record of a call older than a confirmed one fails", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    await commitAll(storage, [w.setText(4, "seq 2")]);
    await storage.close();
    // A record of seq 3 claiming the call from seq 1, after the confirmed record of the call from seq 2.
    const payload = {
      type: "document" as const,
      id: 4,
      content: { kind: "delta" as const, version: 1, ops: [["s", ["text"], "odd"]] as never },
    };
    writeFileSync(
      file("doc-4.jsonl"),
      readFileSync(file("doc-4.jsonl"), "utf8") +
        encodeRecord({ seq: 3, call: 1, ordinal: 0, payload }),
    );
    const error = await openFails(dir.path);
    expect(error.location).toEqual({ file: "main.jsonl", line: 3 });
    expect(error.message).toMatch(
      /doc-4\.jsonl line 3 is an unconfirmed record of the call from seq 1, older than the confirmed call from seq 2/,
    );
  });
});

describe("lost markers > what a crash legitimately leaves", () => {
  it("a group commit whose later markers are missing at a line boundary opens with its first batch; the rest is cut and kept aside", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    // One call, three batches (seqs 2, 3, 4), each with a document record.
    await commitAll(
      storage,
      [w.entry(10, 1, "a"), w.setText(4, "a")],
      [w.entry(11, 1, "b"), w.setText(4, "b")],
      [w.entry(12, 1, "c"), w.setText(4, "c"), w.createDoc(5, 1, { text: "new" })],
    );
    await storage.close();
    const doc4 = readFileSync(file("doc-4.jsonl"));
    const doc5 = readFileSync(file("doc-5.jsonl"));
    // A short write of the call's markers that ended exactly after its first marker.
    keepLines("main.jsonl", 2);
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery.commits).toBe(2);
    expect((await reopened.entry(10 as EntryId))?.commitSeq).toBe(2);
    expect(await reopened.entry(11 as EntryId)).toBeUndefined();
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({ text: "a" });
    const { truncated, setAside } = reopened.recovery;
    expect(truncated.map((t) => t.file)).toEqual(["doc-4.jsonl"]);
    expect(setAside.map((s) => s.file)).toEqual(["doc-5.jsonl"]);
    await reopened.close();
    // Kept, byte for byte: the cut records of seqs 3 and 4, and the unconfirmed document's file.
    const kept = readFileSync(file("doc-4.jsonl"));
    expect(Buffer.concat([kept, readFileSync(file(truncated[0]?.savedAs as string))])).toEqual(
      doc4,
    );
    expect(readFileSync(file(setAside[0]?.savedAs as string))).toEqual(doc5);
  });

  it("a whole call whose markers never landed is cut and kept aside; the storage goes on from the seq after the last marker", async () => {
    await hundredCommits();
    keepLines("main.jsonl", 99);
    const reopened = await openJsonlStorage(dir.path);
    expect(reopened.recovery.commits).toBe(99);
    expect(reopened.recovery.truncated.map((t) => t.file)).toEqual(["doc-3.jsonl", "doc-4.jsonl"]);
    expect(await commitAll(reopened, [w.entry(500, 1, "next"), w.setText(4, "next")])).toEqual([
      100,
    ]);
    await reopened.close();
    const again = await openJsonlStorage(dir.path);
    expect((await again.document(4 as DocumentId, "current"))?.value).toEqual({ text: "next" });
    expect(again.recovery.truncated).toEqual([]);
    // Two opens, two recovery copies at most; nothing in recovered/ is overwritten.
    expect(readdirSync(file("recovered"))).toHaveLength(2);
    await again.close();
  });
});
