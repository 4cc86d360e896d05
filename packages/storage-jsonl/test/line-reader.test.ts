import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nodeFileSystem, type FileSystem } from "../src/index.js";
import { FileLines, READS_AHEAD } from "../src/line-reader.js";
import { directoryPerTest } from "./support/test-directory.js";

const dir = directoryPerTest();

/** The real file system, counting reads and the most in flight at once. */
function countingFileSystem(): { fs: FileSystem; stats: { reads: number; mostInFlight: number } } {
  const stats = { reads: 0, mostInFlight: 0 };
  let inFlight = 0;
  const fs: FileSystem = {
    ...nodeFileSystem,
    async read(path, range) {
      stats.reads++;
      stats.mostInFlight = Math.max(stats.mostInFlight, ++inFlight);
      try {
        return await nodeFileSystem.read(path, range);
      } finally {
        inFlight--;
      }
    },
  };
  return { fs, stats };
}

/** Every line FileLines gives (text, number, offset, length), then its end, size and tail. */
async function readAll(fs: FileSystem, path: string, chunk: number) {
  const reader = new FileLines(fs, path, chunk);
  const lines: { text: string; line: number; offset: number; length: number }[] = [];
  for (let w = await reader.next(); w; w = await reader.next())
    while (w.next())
      lines.push({ text: w.text(), line: w.line, offset: w.offset, length: w.length });
  return {
    lines,
    end: reader.end,
    size: reader.size,
    tail: reader.tail.toString(),
    exists: reader.exists,
  };
}

/** What FileLines must give for `content`, computed directly. */
function expected(content: string) {
  const lines: { text: string; line: number; offset: number; length: number }[] = [];
  const bytes = Buffer.from(content);
  let from = 0;
  for (let nl = bytes.indexOf(10); nl >= 0; from = nl + 1, nl = bytes.indexOf(10, from))
    lines.push({
      text: bytes.toString("utf8", from, nl),
      line: lines.length + 1,
      offset: from,
      length: nl + 1 - from,
    });
  return {
    lines,
    end: from,
    size: bytes.length,
    tail: bytes.toString("utf8", from),
    exists: true,
  };
}

describe("FileLines", () => {
  const chunk = 16;
  const cases: Record<string, string> = {
    empty: "",
    "short lines": "a\nbb\nccc\n",
    "a line of many chunks between short ones": `x\n${"é".repeat(50)}\ny\n`,
    "exactly two chunks": `${"a".repeat(15)}\n${"b".repeat(15)}\n`,
    "an unterminated tail": "a\nbb\nunterminated",
    "an unterminated tail of many chunks": `a\n${"z".repeat(70)}`,
    "only a long unterminated line": "q".repeat(40),
    "multi-byte characters across chunk boundaries": `${"€".repeat(9)}\n${"ü".repeat(13)}\n`,
  };
  for (const [name, content] of Object.entries(cases))
    it(`${name}: every line, numbered and placed as in the file, then end, size and tail`, async () => {
      const path = dir.file("f.jsonl");
      writeFileSync(path, content);
      expect(await readAll(nodeFileSystem, path, chunk)).toEqual(expected(content));
    });

  it("lines of every length (empty, multi-byte, longer than a chunk), unterminated or not, at chunk sizes from 1 to 40", async () => {
    // A fixed pseudo-random sequence: the same files on every run.
    let seed = 23;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = ["a", "é", "€", "{", '"', "0"];
    const path = dir.file("f.jsonl");
    for (let file = 0; file < 8; file++) {
      let content = "";
      const lines = 1 + next(30);
      for (let i = 0; i < lines; i++) {
        const length = next(8) === 0 ? 30 + next(60) : next(12);
        for (let c = 0; c < length; c++) content += pieces[next(pieces.length)] as string;
        if (i < lines - 1 || next(2) === 0) content += "\n";
      }
      writeFileSync(path, content);
      for (const size of [1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 23, 31, 40])
        expect(await readAll(nodeFileSystem, path, size), `file ${file}, chunk ${size}`).toEqual(
          expected(content),
        );
    }
  });

  it("windows left half read: the next window goes on at the right line and offset", async () => {
    const content =
      Array.from({ length: 40 }, (_, i) => `line ${i} ${"x".repeat(i % 7)}`).join("\n") + "\n";
    const path = dir.file("f.jsonl");
    writeFileSync(path, content);
    const all = expected(content).lines;
    for (const size of [5, 16, 33]) {
      const reader = new FileLines(nodeFileSystem, path, size);
      const seen: { text: string; line: number; offset: number; length: number }[] = [];
      // Only the first line of each window is read.
      for (let w = await reader.next(); w; w = await reader.next())
        if (w.next())
          seen.push({ text: w.text(), line: w.line, offset: w.offset, length: w.length });
      expect(seen.length).toBeGreaterThan(1);
      for (const line of seen) expect(line).toEqual(all[line.line - 1]);
      expect(reader.end).toBe(Buffer.byteLength(content));
    }
  });

  it("a missing file: no lines, exists is false", async () => {
    const read = await readAll(nodeFileSystem, dir.file("missing.jsonl"), chunk);
    expect(read).toEqual({ lines: [], end: 0, size: 0, tail: "", exists: false });
  });

  it("a file smaller than a chunk costs one read; a large one keeps at most READS_AHEAD reads in flight", async () => {
    const small = dir.file("small.jsonl");
    writeFileSync(small, "a\nb\n");
    const one = countingFileSystem();
    await readAll(one.fs, small, chunk);
    expect(one.stats.reads).toBe(1);

    const large = dir.file("large.jsonl");
    const content = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join("");
    writeFileSync(large, content);
    const many = countingFileSystem();
    expect((await readAll(many.fs, large, chunk)).lines).toHaveLength(200);
    expect(many.stats.mostInFlight).toBe(READS_AHEAD);
    // Every chunk once, and the reads already in flight when the end was found.
    expect(many.stats.reads).toBeGreaterThanOrEqual(Math.ceil(content.length / chunk));
    expect(many.stats.reads).toBeLessThanOrEqual(Math.ceil(content.length / chunk) + READS_AHEAD);
  });
});
