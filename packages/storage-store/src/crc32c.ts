/**
 * CRC-32C (Castagnoli), the checksum LevelDB uses for its log and table
 * files and this package uses for stored values. Plain table-driven code
 * (slice-by-16): no dependency, and the same result in Node and in browsers.
 */

/**
 * Slice-by-16 tables in one flat array (one array to index keeps the loop
 * fast even before the JIT has optimized it, which matters for the file
 * checks that run once per open): `T[n]` is the byte-at-a-time table, and
 * `T[256 * k + n]` advances `T[256 * (k - 1) + n]` by one more zero byte.
 */
const T = (() => {
  const t = new Uint32Array(16 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let k = 1; k < 16; k++)
    for (let n = 0; n < 256; n++) {
      const prev = t[256 * (k - 1) + n] as number;
      t[256 * k + n] = (prev >>> 8) ^ (t[prev & 0xff] as number);
    }
  return t;
})();

/** A running CRC-32C: start from `0`, feed bytes or text, use the result. */
export type Crc = number;

/** Feeds `bytes[start, end)` into a running CRC (pass 0 to start one); sixteen bytes a step (file checks read megabytes). */
export function crcBytes(crc: Crc, bytes: Uint8Array, start = 0, end = bytes.length): Crc {
  const t = T as unknown as number[];
  const b = bytes as unknown as number[];
  let c = ~crc >>> 0;
  let i = start;
  for (; i + 16 <= end; i += 16) {
    c ^= b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
    c =
      t[3840 + (c & 0xff)]! ^
      t[3584 + ((c >>> 8) & 0xff)]! ^
      t[3328 + ((c >>> 16) & 0xff)]! ^
      t[3072 + (c >>> 24)]! ^
      t[2816 + b[i + 4]!]! ^
      t[2560 + b[i + 5]!]! ^
      t[2304 + b[i + 6]!]! ^
      t[2048 + b[i + 7]!]! ^
      t[1792 + b[i + 8]!]! ^
      t[1536 + b[i + 9]!]! ^
      t[1280 + b[i + 10]!]! ^
      t[1024 + b[i + 11]!]! ^
      t[768 + b[i + 12]!]! ^
      t[512 + b[i + 13]!]! ^
      t[256 + b[i + 14]!]! ^
      t[b[i + 15]!]!;
  }
  for (; i < end; i++) c = t[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(4096);

/** The reused buffer, with room for `units` UTF-16 units (at most three UTF-8 bytes each) and `extra` bytes. */
function scratchFor(units: number, extra = 0): Uint8Array {
  const most = units * 3 + extra;
  if (most > scratch.length) scratch = new Uint8Array(most);
  return scratch;
}

/**
 * Feeds the UTF-8 bytes of `text` into a running CRC (a lone surrogate
 * counts as U+FFFD, as `TextEncoder` writes it). Encodes into a reused
 * buffer, then sums sixteen bytes a step: several times faster than summing
 * character by character.
 */
export function crcText(crc: Crc, text: string): Crc {
  const bytes = scratchFor(text.length);
  return crcBytes(crc, bytes, 0, encoder.encodeInto(text, bytes).written);
}

/**
 * The UTF-8 bytes of `first`, one zero byte, then those of `second`, summed
 * in one pass (as `crcText` over the three would): both are encoded into the
 * reused buffer side by side, so a framed value costs one sum instead of
 * three (the framing's key, separator and payload).
 */
export function crcJoined(first: string, second: string): Crc {
  const bytes = scratchFor(first.length + second.length, 1);
  const split = encoder.encodeInto(first, bytes).written;
  bytes[split] = 0;
  const { written } = encoder.encodeInto(second, bytes.subarray(split + 1));
  return crcBytes(0, bytes, 0, split + 1 + written);
}

/** Two lowercase hex digits per byte value. */
const HEX_BYTE = Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(2, "0"));

/** Eight lowercase hex digits, a byte at a time from a table (`Number#toString(16)` cost several times more per value). */
export function crcHex(crc: Crc): string {
  return (
    (HEX_BYTE[crc >>> 24] as string) +
    (HEX_BYTE[(crc >>> 16) & 0xff] as string) +
    (HEX_BYTE[(crc >>> 8) & 0xff] as string) +
    (HEX_BYTE[crc & 0xff] as string)
  );
}
