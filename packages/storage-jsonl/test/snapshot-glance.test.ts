import { crc32 } from "node:zlib";
import type { ConversationId, EntryId, EntryRecord, Json } from "@durably/core";
import { describe, expect, it } from "vitest";
import { bytesChecksum } from "../src/line-checksum.js";
import {
  encodeSnapshotLine,
  glanceEntryBytes,
  glanceEntryLine,
  glancedBytes,
  headAt,
} from "../src/snapshot-format.js";

/*
 * Open reads an entry line's ids and checksum from its bytes (`glanceEntryBytes`, with the
 * `"head"` search shared by the lines of a buffer); an entry's first read checks its line
 * against `glanceEntryLine` of the text. Both must agree on every line: the same lines glanced,
 * the same values, and a byte-level checksum equal to zlib's over the text the `crc` covers.
 */

const entry = (id: number, data: Json, head?: number): EntryRecord => ({
  id: id as EntryId,
  conversationId: 3 as ConversationId,
  kind: "note",
  data,
  ...(head === undefined ? {} : { head: head as EntryId }),
});

const written = (id: number, data: Json, head?: number) =>
  encodeSnapshotLine({ type: "entry", seq: id + 100, value: entry(id, data, head) }).slice(0, -1);

/** Lines as this version writes them, and lines laid out or damaged otherwise. */
const LINES = [
  written(10, { text: "plain" }),
  written(11, { text: "with a head" }, 10),
  written(12, { text: 'a "head" in a string' }),
  written(13, { head: 1 }), // a member named head, inside the data
  written(14, { text: 'ahead" of time', other: 'head"' }), // head" without the quote before it
  written(15, { text: "ünïcödé ✓ 😀 head" }),
  written(16, "x".repeat(2000)), // checksummed by zlib
  written(9007199254740991, null),
  written(17, { text: "plain" }).replace('"crc":', '"crc" :'),
  written(18, { text: "plain" }).replace('"seq":118', '"seq":0118'),
  written(19, { text: "plain" }).replace('"id":19', '"id":19.5'),
  written(20, { text: "plain" }).replace(/\d+\}$/, "99999999999}"),
  written(21, { text: "plain" }).replace(/\}$/, ""),
  written(22, { text: "plain" }).replace('"conversationId":3,', '"conversationId":3 ,'),
  '{"type":"entry","seq":5,"value":{"conversationId":3,"id":23},"crc":1}',
  '{"type":"task","value":{"id":24},"crc":1}',
  '{"type":"entry","seq":5,"value":{"id":25,"conversationId":3},"crc":}',
  '{"type":"entry","seq":5,"value":{"id":26,"conversationId":3},"crc":4294967296}',
  '{"type":"entry","seq":5,"value":{"id":27,"conversationId":3}',
  "",
];

describe("snapshot entry glance over bytes", () => {
  it("glances exactly the lines glanceEntryLine glances, with the same values and checksum", () => {
    const bytes = Buffer.from(`${LINES.join("\n")}\n`);
    let head = -2;
    let start = 0;
    let glanced = 0;
    for (const text of LINES) {
      const end = bytes.indexOf(10, start);
      // As open does: one search per "head" in the buffer, not one per line.
      if (head !== -1 && head < start) head = headAt(bytes, start);
      expect(head).toBe(bytes.indexOf('"head"', start));
      const expected = glanceEntryLine(text);
      expect(glanceEntryBytes(bytes, start, end, head), text).toBe(expected !== undefined);
      if (expected !== undefined) {
        glanced++;
        const { crcAt, ...values } = glancedBytes;
        const { crcAt: textCrcAt, ...textValues } = expected;
        expect(values).toEqual(textValues);
        // The member starts at the same place, counted in bytes rather than characters.
        expect(crcAt - start).toBe(Buffer.byteLength(text.slice(0, textCrcAt)));
        expect(bytesChecksum(bytes, start, crcAt)).toBe(crc32(`${text.slice(0, textCrcAt)}}`));
        expect(bytesChecksum(bytes, start, crcAt)).toBe(expected.crc);
      }
      start = end + 1;
    }
    // Lines 10, 12, 14 and 15 (no `"head"` in their text) and the long one.
    expect(glanced).toBe(5);
  });

  it('headAt finds "head" only with its opening quote, from where it is asked', () => {
    const bytes = Buffer.from('ahead" "head" x"head"');
    expect(headAt(bytes, 0)).toBe(7);
    expect(headAt(bytes, 7)).toBe(7);
    expect(headAt(bytes, 8)).toBe(15);
    expect(headAt(bytes, 16)).toBe(-1);
  });
});
