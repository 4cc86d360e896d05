/**
 * CRC-32C (Castagnoli), the checksum LevelDB uses for its log and table
 * files and this package uses for stored values. Plain table-driven code: no
 * dependency, and the same result in Node and in browsers.
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
const TABLE = T[0];

/** A running CRC-32C: start from `0`, feed bytes or text, read `finish`. */
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

/**
 * Feeds the UTF-8 bytes of `text` into a running CRC without encoding it
 * first (a lone surrogate counts as U+FFFD, as `TextEncoder` would encode it).
 */
export function crcText(crc: Crc, text: string): Crc {
  let c = ~crc >>> 0;
  const step = (byte: number) => {
    c = (TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  };
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      c = (TABLE[(c ^ code) & 0xff] as number) ^ (c >>> 8);
      continue;
    }
    if (code < 0x800) {
      step(0xc0 | (code >>> 6));
      step(0x80 | (code & 0x3f));
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        i++;
        step(0xf0 | (code >>> 18));
        step(0x80 | ((code >>> 12) & 0x3f));
        step(0x80 | ((code >>> 6) & 0x3f));
        step(0x80 | (code & 0x3f));
        continue;
      }
      code = 0xfffd;
    }
    step(0xe0 | (code >>> 12));
    step(0x80 | ((code >>> 6) & 0x3f));
    step(0x80 | (code & 0x3f));
  }
  return ~c >>> 0;
}

/** Eight lowercase hex digits. */
export function crcHex(crc: Crc): string {
  return crc.toString(16).padStart(8, "0");
}
