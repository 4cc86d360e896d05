import { crcBytes } from "../crc32c.js";
import { ByteReader } from "./bytes.js";
import { unsnappy } from "./snappy.js";

/**
 * A check of a LevelDB table file (`NNNNNN.ldb`, formerly `.sst`), in
 * LevelDB's documented table format: data blocks, a filter block, a
 * metaindex block, an index block, then a 48-byte footer naming the index
 * and metaindex. Every block ends in a 5-byte trailer: its compression type
 * and the masked CRC-32C of its bytes and that type.
 *
 * classic-level reads tables without checking those sums (LevelDB's
 * `verify_checksums` and `paranoid_checks` are off and not exposed), so a
 * damaged index, filter or key can make LevelDB skip keys without an error.
 * This check verifies every block's sum and that the blocks tile the file.
 */

const FOOTER = 48;
const TRAILER = 5;
const MAGIC = [0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb];
const NO_COMPRESSION = 0;
const SNAPPY = 1;

interface Handle {
  offset: number;
  size: number;
  what: string;
}

function unmask(masked: number): number {
  const rot = (masked - 0xa282ead8) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}

function handle(r: ByteReader, what: string): Handle {
  return { offset: r.varint(), size: r.varint(), what };
}

/** A block's stored bytes after checking its trailer; decompressed when `decode` asks. */
function block(bytes: Uint8Array, h: Handle, end: number, decode: boolean): Uint8Array {
  if (h.offset + h.size + TRAILER > end)
    throw new RangeError(`${h.what} at byte ${h.offset} (${h.size} bytes) runs past the blocks`);
  const type = bytes[h.offset + h.size] as number;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stored = unmask(view.getUint32(h.offset + h.size + 1, true));
  const crc = crcBytes(0, bytes, h.offset, h.offset + h.size + 1);
  if (crc !== stored) throw new RangeError(`${h.what} at byte ${h.offset}: checksum mismatch`);
  const contents = bytes.subarray(h.offset, h.offset + h.size);
  if (!decode) return contents;
  if (type === NO_COMPRESSION) return contents;
  if (type === SNAPPY) return unsnappy(contents);
  throw new RangeError(`${h.what} at byte ${h.offset}: unknown compression type ${type}`);
}

/** The values of a block's entries (prefix-compressed keys, restart array at the end). */
function entries(contents: Uint8Array, what: string): { key: Uint8Array; value: Uint8Array }[] {
  if (contents.length < 4) throw new RangeError(`${what} is shorter than its restart count`);
  const view = new DataView(contents.buffer, contents.byteOffset, contents.byteLength);
  const restarts = view.getUint32(contents.length - 4, true);
  const limit = contents.length - 4 * (restarts + 1);
  if (restarts === 0 || limit < 0)
    throw new RangeError(`${what} has a bad restart count ${restarts}`);
  const r = new ByteReader(contents, 0, limit);
  const out: { key: Uint8Array; value: Uint8Array }[] = [];
  let last = new Uint8Array(0);
  while (!r.done) {
    const shared = r.varint();
    const unshared = r.varint();
    const valueLength = r.varint();
    if (shared > last.length) throw new RangeError(`${what}: an entry shares more than its key`);
    const key = new Uint8Array(shared + unshared);
    key.set(last.subarray(0, shared));
    key.set(r.slice(unshared), shared);
    out.push({ key, value: r.slice(valueLength) });
    last = key;
  }
  return out;
}

/** `undefined` when the table is sound; otherwise what is wrong, with the byte offset. */
export function checkTable(bytes: Uint8Array): string | undefined {
  try {
    if (bytes.length < FOOTER) return `${bytes.length} bytes, shorter than a table footer`;
    const footerAt = bytes.length - FOOTER;
    for (let i = 0; i < 8; i++)
      if (bytes[bytes.length - 8 + i] !== MAGIC[i]) return "no table magic number at the end";
    const footer = new ByteReader(bytes, footerAt, bytes.length - 8);
    const metaindex = handle(footer, "the metaindex block");
    const index = handle(footer, "the index block");
    const handles: Handle[] = [metaindex, index];
    const indexEntries = entries(block(bytes, index, footerAt, true), "the index block");
    indexEntries.forEach(({ value }, i) => {
      const h = handle(new ByteReader(value), `data block ${i}`);
      block(bytes, h, footerAt, false);
      handles.push(h);
    });
    for (const { key, value } of entries(
      block(bytes, metaindex, footerAt, true),
      "the metaindex block",
    )) {
      const h = handle(new ByteReader(value), `meta block ${new TextDecoder().decode(key)}`);
      block(bytes, h, footerAt, false);
      handles.push(h);
    }
    // The blocks must cover the file from byte 0 to the footer, one after another.
    handles.sort((a, b) => a.offset - b.offset);
    let at = 0;
    for (const h of handles) {
      if (h.offset !== at)
        return `${h.what} starts at byte ${h.offset}, but the block before it ends at byte ${at}`;
      at = h.offset + h.size + TRAILER;
    }
    if (at !== footerAt)
      return `the blocks end at byte ${at}, but the footer starts at byte ${footerAt}`;
    return undefined;
  } catch (error) {
    if (error instanceof RangeError) return error.message;
    throw error;
  }
}
