import { statfsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { DocumentId, EntryId, Seq, SubmissionId } from "@durably/core";
import { describe, expect, it } from "vitest";
import { nodeFileSystem, openJsonlStorage, type FileSystem } from "../src/index.js";
import { writeLargeStorage } from "./support/large-storage.js";
import { READ_CHUNK } from "../src/line-reader.js";
import { commitAll, w } from "./support/records.js";
import { directoryPerTest } from "./support/test-directory.js";

const dir = directoryPerTest();

/** The real node file system, recording every read: file, and the range asked (or "whole"). */
function recordingFileSystem(): {
  fs: FileSystem;
  reads: { file: string; length: number | "whole" }[];
} {
  const reads: { file: string; length: number | "whole" }[] = [];
  const fs: FileSystem = {
    ...nodeFileSystem,
    read(path, range) {
      reads.push({ file: path.slice(path.lastIndexOf("/") + 1), length: range?.length ?? "whole" });
      return nodeFileSystem.read(path, range);
    },
  };
  return { fs, reads };
}

const MiB = 1 << 20;

describe("large files > open streams every file in bounded reads", () => {
  it("main.jsonl and sidecars of several MiB are read in chunks of at most READ_CHUNK bytes, never whole", async () => {
    const storage = await openJsonlStorage(dir.path);
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    const filler = "x".repeat(4096);
    for (let call = 0; call < 20; call++) {
      const batches = [];
      for (let b = 0; b < 40; b++) {
        const n = call * 40 + b;
        batches.push([w.entry(100 + n, 1, `${n} ${filler}`), w.setText(4, `${n} ${filler}`)]);
      }
      await commitAll(storage, ...batches);
    }
    await storage.close();
    const mainSize = statSync(join(dir.path, "main.jsonl")).size;
    const docSize = statSync(join(dir.path, "doc-4.jsonl")).size;
    expect(mainSize).toBeGreaterThan(3 * READ_CHUNK);
    expect(docSize).toBeGreaterThan(3 * READ_CHUNK);

    const { fs, reads } = recordingFileSystem();
    const reopened = await openJsonlStorage(dir.path, { fs });
    const ofOpen = [...reads];
    expect((await reopened.entry(899 as EntryId))?.entry.data).toBe(`799 ${filler}`);
    expect((await reopened.document(4 as DocumentId, 400 as Seq))?.value).toEqual({
      text: `398 ${filler}`,
    });
    await reopened.close();
    const of = (file: string) => ofOpen.filter((r) => r.file === file);
    for (const [file, size] of [
      ["main.jsonl", mainSize],
      ["doc-4.jsonl", docSize],
    ] as const) {
      expect(of(file).map((r) => r.length)).not.toContain("whole");
      expect(Math.max(...of(file).map((r) => r.length as number))).toBeLessThanOrEqual(READ_CHUNK);
      // Every byte once (plus the read that finds the end), in chunks.
      expect(of(file).length).toBeGreaterThanOrEqual(Math.ceil(size / READ_CHUNK));
    }
  });

  it("a line longer than a chunk, and multi-byte characters across chunk boundaries, read back intact", async () => {
    const storage = await openJsonlStorage(dir.path);
    const long = "é".repeat(Math.floor(2.5 * READ_CHUNK) / 2); // 2.5 chunks of two-byte characters
    await commitAll(storage, [w.conversation(1), w.createDoc(4, 1, { text: "" }, "rewindable")]);
    await commitAll(storage, [w.entry(5, 1, long), w.setText(4, long)]);
    for (let i = 0; i < 300; i++)
      await commitAll(storage, [w.entry(10 + i, 1, `ü ${i} ${"€".repeat(3000)}`)]);
    await storage.close();
    const { fs, reads } = recordingFileSystem();
    const reopened = await openJsonlStorage(dir.path, { fs });
    expect(reads.some((r) => r.length === "whole")).toBe(false);
    expect((await reopened.entry(5 as EntryId))?.entry.data).toBe(long);
    expect((await reopened.document(4 as DocumentId, "current"))?.value).toEqual({ text: long });
    expect((await reopened.entry(309 as EntryId))?.entry.data).toBe(`ü 299 ${"€".repeat(3000)}`);
    await reopened.close();
    // The long line (over two chunks) was gathered from chunk-sized reads: none asked for more.
    expect(Buffer.byteLength(long)).toBeGreaterThan(2 * READ_CHUNK);
    expect(Math.max(...reads.map((r) => r.length as number))).toBe(READ_CHUNK);
  });
});

describe("large files > past the 512 MiB string limit", () => {
  // Above V8's longest string (2^29 - 24 characters), which one read of the whole file would need.
  const past = 544 * MiB;
  // A sidecar past the limit too doubles the bytes to write: opt in with DURABLY_JSONL_LARGE_SIDECAR=1.
  const sidecarToo = process.env.DURABLY_JSONL_LARGE_SIDECAR === "1";
  const sizes = { mainBytes: past, sidecarBytes: sidecarToo ? past : 4 * MiB };
  it(`a main.jsonl of more than 512 MiB${sidecarToo ? ", and a sidecar of more than 512 MiB," : ""} reopens, with bounded reads`, async (context) => {
    const free = statfsSync(dir.path);
    const needed = sizes.mainBytes + sizes.sidecarBytes + 64 * MiB;
    if (free.bavail * free.bsize < needed) {
      console.info(
        `skipped: ${dir.path} has ${Math.floor((free.bavail * free.bsize) / MiB)} MiB free, the test needs ${needed / MiB} MiB`,
      );
      context.skip();
    }
    const started = performance.now();
    const { content, base } = writeLargeStorage(dir.path, sizes);
    const wrote = performance.now();
    expect(statSync(join(dir.path, "main.jsonl")).size).toBeGreaterThan(sizes.mainBytes);
    expect(statSync(join(dir.path, "doc-3.jsonl")).size).toBeGreaterThan(sizes.sidecarBytes);
    const { fs, reads } = recordingFileSystem();
    const storage = await openJsonlStorage(dir.path, { fs });
    const opened = performance.now();
    expect(reads.some((r) => r.length === "whole")).toBe(false);
    expect(Math.max(...reads.map((r) => r.length as number))).toBeLessThanOrEqual(2 * MiB);
    expect((await storage.submission(2 as SubmissionId))?.content).toBe(content);
    expect((await storage.document(3 as DocumentId, "current"))?.value).toBe(base);
    expect(storage.recovery.commits).toBeGreaterThan(512);
    await storage.close();
    console.info(
      `wrote ${Math.round((sizes.mainBytes + sizes.sidecarBytes) / MiB)} MiB in ${((wrote - started) / 1000).toFixed(1)} s, reopened in ${((opened - wrote) / 1000).toFixed(1)} s`,
    );
  }, 300_000);
});
