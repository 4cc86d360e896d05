import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  crc32Bytes,
  crc32Text,
  crc32TextByTables,
  crcMemberAt,
  lineChecksum,
} from "../src/line-checksum.js";

// The reference is zlib's CRC-32 (the one lines were always written with): the JavaScript tables
// open checks lines with must give the same value for any bytes, start and end.
describe("line checksum", () => {
  it("crc32Bytes equals zlib.crc32 for every length 0 to 100 and random ranges of 1 MiB", () => {
    const bytes = randomBytes(1 << 20);
    for (let length = 0; length <= 100; length++)
      for (const start of [0, 1, 3, 7])
        expect(crc32Bytes(bytes, start, start + length)).toBe(
          crc32(bytes.subarray(start, start + length)),
        );
    for (let i = 0; i < 50; i++) {
      const start = Math.floor(Math.random() * bytes.length);
      const end = start + Math.floor(Math.random() * (bytes.length - start));
      expect(crc32Bytes(bytes, start, end)).toBe(crc32(bytes.subarray(start, end)));
    }
  });

  it("crc32Bytes continues a checksum as zlib.crc32 does", () => {
    const bytes = randomBytes(999);
    expect(crc32Bytes(bytes, 500, 999, crc32Bytes(bytes, 0, 500))).toBe(crc32(bytes));
  });

  it("crc32Text, and the tables standing in for it without zlib.crc32, are the CRC-32 of the string's UTF-8 bytes", () => {
    for (const text of ["", "{}", '{"a":"é ✓ 😀"}', "x".repeat(10_000)]) {
      expect(crc32Text(text)).toBe(crc32(Buffer.from(text, "utf8")));
      expect(crc32TextByTables(text)).toBe(crc32(Buffer.from(text, "utf8")));
    }
  });

  for (const [size, text] of [
    ["short", "héllo ✓ 😀"],
    ["long (zlib when present)", `héllo ✓ 😀 ${"x".repeat(5000)}`],
  ])
    it(`lineChecksum over a ${size} line's bytes equals the checksum over its text, non-ASCII included`, () => {
      const json = `{"type":"entry","value":{"text":"${text}"}}`;
      const line = `${json.slice(0, -1)},"crc":${crc32(json)}}`;
      const bytes = Buffer.from(`garbage\n${line}\nmore`);
      const start = bytes.indexOf(10) + 1;
      const at = { bytes, start, lineEnd: bytes.indexOf(10, start) };
      const crcAt = crcMemberAt(line, crc32(json));
      expect(crcAt).toBe(line.lastIndexOf(',"crc":'));
      expect(lineChecksum(line, crcAt, at)).toBe(crc32(json));
      expect(lineChecksum(line, crcAt)).toBe(crc32(json));
    });

  it("crcMemberAt accepts only 1 to 10 digits of the parsed value before the final brace", () => {
    expect(crcMemberAt('{"a":1,"crc":0}', 0)).toBe(6);
    expect(crcMemberAt('{"a":1,"crc":4294967295}', 4294967295)).toBe(6);
    expect(crcMemberAt('{"a":1,"crc":12}', 13)).toBe(-1); // another value than parsed
    expect(crcMemberAt('{"a":1,"crc":12}', "12")).toBe(-1); // parsed as a string
    expect(crcMemberAt('{"a":1,"crc":-12}', -12)).toBe(-1);
    expect(crcMemberAt('{"a":1,"crc":1e3}', 1000)).toBe(-1);
    expect(crcMemberAt('{"a":1,"crc":12.0}', 12)).toBe(-1);
    expect(crcMemberAt('{"a":1,"crc":4294967296}', 4294967296)).toBe(-1); // above 32 bits
    expect(crcMemberAt('{"a":1,"crc":12345678901}', 12345678901)).toBe(-1); // 11 digits
    expect(crcMemberAt('{"a":1,"crc":}', undefined)).toBe(-1);
    expect(crcMemberAt('{"crc":12,"a":1}', 12)).toBe(-1); // not the last member
    expect(crcMemberAt('{"a":1,"crc":12} ', 12)).toBe(-1); // not ending with the brace
  });
});
