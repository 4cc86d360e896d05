/**
 * CRC-32C (Castagnoli), the checksum LevelDB uses for its log and table
 * files and this package uses for stored values. Plain table-driven code
 * (slice-by-8): no dependency, and the same result in Node and in browsers.
 */

/** Slice-by-8 tables: `T[0]` is the byte-at-a-time table, `T[k][n]` advances `T[k-1][n]` by one more zero byte. */
const T = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const t0 = tables[0] as Uint32Array;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t0[n] = c >>> 0;
  }
  for (let k = 1; k < 8; k++) {
    const prev = tables[k - 1] as Uint32Array;
    const table = tables[k] as Uint32Array;
    for (let n = 0; n < 256; n++)
      table[n] = ((prev[n] as number) >>> 8) ^ (t0[(prev[n] as number) & 0xff] as number);
  }
  return tables as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
})();

/** A running CRC-32C: start from `0`, feed bytes or text, use the result. */
export type Crc = number;

/** Feeds `bytes[start, end)` into a running CRC (pass 0 to start one); eight bytes a step (file checks read megabytes). */
export function crcBytes(crc: Crc, bytes: Uint8Array, start = 0, end = bytes.length): Crc {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = T;
  const b = bytes as unknown as number[];
  let c = ~crc >>> 0;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    c ^= b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
    c =
      t7[c & 0xff]! ^
      t6[(c >>> 8) & 0xff]! ^
      t5[(c >>> 16) & 0xff]! ^
      t4[c >>> 24]! ^
      t3[b[i + 4]!]! ^
      t2[b[i + 5]!]! ^
      t1[b[i + 6]!]! ^
      t0[b[i + 7]!]!;
  }
  for (; i < end; i++) c = t0[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(4096);

/**
 * Feeds the UTF-8 bytes of `text` into a running CRC (a lone surrogate
 * counts as U+FFFD, as `TextEncoder` writes it). Encodes into a reused
 * buffer, then sums eight bytes a step: several times faster than summing
 * character by character.
 */
export function crcText(crc: Crc, text: string): Crc {
  // At most three UTF-8 bytes per UTF-16 unit.
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, scratch);
  return crcBytes(crc, scratch, 0, written);
}

/** Eight lowercase hex digits. */
export function crcHex(crc: Crc): string {
  return crc.toString(16).padStart(8, "0");
}
