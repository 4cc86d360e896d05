import { ByteReader } from "./bytes.js";

/**
 * Snappy decompression (the block format LevelDB compresses table blocks
 * with), enough to read a table's index and metaindex blocks. Malformed
 * input throws `RangeError`.
 */
export function unsnappy(input: Uint8Array): Uint8Array {
  const r = new ByteReader(input);
  const length = r.varint();
  const out = new Uint8Array(length);
  let at = 0;
  while (!r.done) {
    const tag = r.byte();
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >>> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = 0;
        for (let i = 0; i < bytes; i++) n += r.byte() * 2 ** (8 * i);
      }
      const literal = r.slice(n + 1);
      if (at + literal.length > length) throw new RangeError("snappy literal runs past the output");
      out.set(literal, at);
      at += literal.length;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      n = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | r.byte();
    } else if (kind === 2) {
      n = (tag >>> 2) + 1;
      offset = r.byte() | (r.byte() << 8);
    } else {
      n = (tag >>> 2) + 1;
      offset = (r.byte() | (r.byte() << 8) | (r.byte() << 16)) + r.byte() * 2 ** 24;
    }
    if (offset === 0 || offset > at || at + n > length)
      throw new RangeError("snappy copy out of bounds");
    if (offset >= n) {
      out.copyWithin(at, at - offset, at - offset + n);
      at += n;
    } else {
      // Byte by byte: this copy overlaps the bytes it produces (a repeated run).
      for (let i = 0; i < n; i++, at++) out[at] = out[at - offset] as number;
    }
  }
  if (at !== length)
    throw new RangeError(`snappy output is ${at} bytes, its header says ${length}`);
  return out;
}
