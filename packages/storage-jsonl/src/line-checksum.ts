import * as zlib from "node:zlib";

/**
 * The CRC-32 (IEEE, as `zlib.crc32`) every JSONL line carries as its last
 * member, `,"crc":<decimal>}`: the checksum of the line's JSON without that
 * member.
 *
 * Reading checks it over the line's own bytes in JavaScript (slice-by-8
 * tables) when the line is short: open checks one short line after another,
 * and per line a call into zlib with its `subarray` costs more than the bytes
 * themselves; longer lines go to zlib when this Node has it.
 * Writing checksums a string: `zlib.crc32` when this Node has it (20.15 and
 * 22.2 on), else the same tables over its UTF-8 bytes; the module imports
 * zlib as a namespace so an older Node 20 still loads it.
 */

const TABLES = makeTables();

function makeTables(): Int32Array {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  // Table k advances a byte that is followed by k more bytes of the same 8-byte step.
  for (let k = 1; k < 8; k++)
    for (let n = 0; n < 256; n++) {
      const previous = t[(k - 1) * 256 + n] as number;
      t[k * 256 + n] = (previous >>> 8) ^ (t[previous & 0xff] as number);
    }
  return t;
}

/** CRC-32 of `bytes[start, end)`, continuing from `crc` (0 to start). */
export function crc32Bytes(bytes: Uint8Array, start: number, end: number, crc = 0): number {
  const t = TABLES;
  let c = ~crc;
  let i = start;
  for (; end - i >= 8; i += 8) {
    const a =
      c ^
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24));
    c =
      (t[1792 + (a & 0xff)] as number) ^
      (t[1536 + ((a >>> 8) & 0xff)] as number) ^
      (t[1280 + ((a >>> 16) & 0xff)] as number) ^
      (t[1024 + (a >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < end; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

const nativeCrc32 = (zlib as { crc32?: (data: string | Uint8Array) => number }).crc32;

/**
 * Line length (bytes) from which zlib is used when present. Measured on
 * Node 20.20: for a 150-byte line the tables take 130 ns and zlib 260; they
 * are even near 512 bytes; for 64 KiB zlib is 9 times faster.
 */
const NATIVE_FROM = 512;

/** CRC-32 of a string's UTF-8 bytes by the tables: `crc32Text` where Node has no `zlib.crc32`. */
export function crc32TextByTables(text: string): number {
  const bytes = Buffer.from(text);
  return crc32Bytes(bytes, 0, bytes.length);
}

/** CRC-32 of a string's UTF-8 bytes. */
export const crc32Text: (text: string) => number = nativeCrc32 ?? crc32TextByTables;

/** The member every line ends with, before its digits and the closing `}`. */
export const CRC_MEMBER = ',"crc":';

/** `"}"`, which ends the text a line's checksum covers. */
const CLOSE_BRACE = 125;

/**
 * Where a line's text starts its checksum member, when it ends with
 * `,"crc":<1 to 10 digits>}` whose value is `parsed` (the `crc` that
 * `JSON.parse` of the whole line found, so the member is the line's own and
 * its last); -1 otherwise.
 */
export function crcMemberAt(text: string, parsed: unknown): number {
  if (typeof parsed !== "number") return -1;
  const member = crcMember(text);
  return member !== undefined && member.value === parsed ? member.at : -1;
}

/**
 * Where a line's text starts the checksum member it ends with,
 * `,"crc":<1 to 10 digits>}` (a 32-bit value), and that value, read from
 * the text alone; undefined when it ends otherwise. Without a parse of the
 * line, this alone does not prove the member is the line's own: checking
 * the checksum it gives does (the member is outside what the checksum
 * covers, and a line whose text verifies is the text its writer wrote).
 */
export function crcMember(text: string): { at: number; value: number } | undefined {
  const end = text.length - 1;
  if (text.charCodeAt(end) !== CLOSE_BRACE) return undefined;
  // Read back from the brace over the digits (no search of the line), then the member's name.
  let value = 0;
  let scale = 1;
  let from = end;
  for (; from > end - 11 && from > 0; from--) {
    const digit = text.charCodeAt(from - 1) - 48;
    if (digit < 0 || digit > 9) break;
    value += digit * scale;
    scale *= 10;
  }
  const at = from - CRC_MEMBER.length;
  if (from === end || end - from > 10 || at < 0 || !text.startsWith(CRC_MEMBER, at))
    return undefined;
  return value <= 0xffffffff ? { at, value } : undefined;
}

/**
 * The checksum of a line whose member starts at `crcAt`: over the line's
 * bytes when a cursor stands on it (`bytes[start, lineEnd)`: no re-encoding;
 * the value is the same, since a line is written as the UTF-8 of the text
 * whose CRC it carries), else over the text.
 */
export function lineChecksum(
  text: string,
  crcAt: number,
  at?: { bytes: Uint8Array; start: number; lineEnd: number },
): number {
  if (at === undefined) return crc32Text(`${text.slice(0, crcAt)}}`);
  // The text from `crcAt` on is ASCII (checked by `crcMemberAt`): as many bytes as characters.
  return bytesChecksum(at.bytes, at.start, at.lineEnd - (text.length - crcAt));
}

/**
 * The checksum of the line at `bytes[start…]` whose checksum member starts
 * at byte `crcAt`: the CRC of `bytes[start, crcAt)` and a closing brace.
 */
export function bytesChecksum(bytes: Uint8Array, start: number, crcAt: number): number {
  const crc =
    nativeCrc32 !== undefined && crcAt - start >= NATIVE_FROM
      ? nativeCrc32(bytes.subarray(start, crcAt))
      : crc32Bytes(bytes, start, crcAt);
  // One more byte, the closing brace.
  const c = ~crc;
  return ~((TABLES[(c ^ CLOSE_BRACE) & 0xff] as number) ^ (c >>> 8)) >>> 0;
}
