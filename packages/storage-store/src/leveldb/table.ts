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
 *
 * It runs on every live table at every open, over megabytes: the index is
 * walked without building its keys, and data blocks are summed in file
 * order as the index lists them.
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

/** One table's bytes, with the view its trailers are read through. */
class Table {
  readonly view: DataView;
  readonly footerAt: number;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.footerAt = bytes.length - FOOTER;
  }

  /** What is wrong with the block at `offset` (`size` bytes) and its trailer, if anything. */
  problem(offset: number, size: number): string | undefined {
    if (offset + size + TRAILER > this.footerAt)
      return `at byte ${offset} (${size} bytes) runs past the blocks`;
    const stored = unmask(this.view.getUint32(offset + size + 1, true));
    if (crcBytes(0, this.bytes, offset, offset + size + 1) !== stored)
      return `at byte ${offset}: checksum mismatch`;
    return undefined;
  }

  check(h: Handle): void {
    const problem = this.problem(h.offset, h.size);
    if (problem !== undefined) throw new RangeError(`${h.what} ${problem}`);
  }

  /** A checked block's contents, decompressed. */
  contents(h: Handle): Uint8Array {
    this.check(h);
    const type = this.bytes[h.offset + h.size] as number;
    const contents = this.bytes.subarray(h.offset, h.offset + h.size);
    if (type === NO_COMPRESSION) return contents;
    if (type === SNAPPY) return unsnappy(contents);
    throw new RangeError(`${h.what} at byte ${h.offset}: unknown compression type ${type}`);
  }
}

/**
 * Walks a block's entries (prefix-compressed keys, restart array at the
 * end), handing `visit` a reader at each value, with the key only when
 * `keys` asks for it.
 */
function walk(
  contents: Uint8Array,
  what: string,
  keys: boolean,
  visit: (value: ByteReader, key: Uint8Array | undefined) => void,
): void {
  if (contents.length < 4) throw new RangeError(`${what} is shorter than its restart count`);
  const view = new DataView(contents.buffer, contents.byteOffset, contents.byteLength);
  const restarts = view.getUint32(contents.length - 4, true);
  const limit = contents.length - 4 * (restarts + 1);
  if (restarts === 0 || limit < 0)
    throw new RangeError(`${what} has a bad restart count ${restarts}`);
  const r = new ByteReader(contents, 0, limit);
  let last: Uint8Array = new Uint8Array(0);
  let lastLength = 0;
  while (!r.done) {
    const shared = r.varint();
    const unshared = r.varint();
    const valueLength = r.varint();
    if (shared > lastLength) throw new RangeError(`${what}: an entry shares more than its key`);
    let key: Uint8Array | undefined;
    if (keys) {
      const whole = new Uint8Array(shared + unshared);
      whole.set(last.subarray(0, shared));
      whole.set(r.slice(unshared), shared);
      last = key = whole;
    } else if (r.pos + unshared > limit)
      throw new RangeError(`${what}: a key runs past its block at byte ${r.pos}`);
    else r.pos += unshared;
    lastLength = shared + unshared;
    const valueEnd = r.pos + valueLength;
    if (valueEnd > limit) throw new RangeError(`${what}: an entry runs past its block`);
    visit(r, key);
    if (r.pos > valueEnd) throw new RangeError(`${what}: a value runs past its entry`);
    r.pos = valueEnd;
  }
}

/** `undefined` when the table is sound; otherwise what is wrong, with the byte offset. */
export function checkTable(bytes: Uint8Array): string | undefined {
  try {
    if (bytes.length < FOOTER) return `${bytes.length} bytes, shorter than a table footer`;
    for (let i = 0; i < 8; i++)
      if (bytes[bytes.length - 8 + i] !== MAGIC[i]) return "no table magic number at the end";
    const table = new Table(bytes);
    const footer = new ByteReader(bytes, table.footerAt, bytes.length - 8);
    const metaindex = handle(footer, "the metaindex block");
    const index = handle(footer, "the index block");
    // Data blocks come first, in the order the index lists them, each right after the one before.
    let at = 0;
    let block = 0;
    walk(table.contents(index), "the index block", false, (value) => {
      const offset = value.varint();
      const size = value.varint();
      if (offset !== at)
        throw new RangeError(
          `data block ${block} starts at byte ${offset}, but the block before it ends at byte ${at}`,
        );
      const problem = table.problem(offset, size);
      if (problem !== undefined) throw new RangeError(`data block ${block} ${problem}`);
      block++;
      at = offset + size + TRAILER;
    });
    // Then the meta blocks (the filter), the metaindex and the index, in whatever order they lie.
    const rest: Handle[] = [metaindex, index];
    walk(table.contents(metaindex), "the metaindex block", true, (value, key) => {
      const h = handle(value, `meta block ${new TextDecoder().decode(key)}`);
      table.check(h);
      rest.push(h);
    });
    rest.sort((a, b) => a.offset - b.offset);
    for (const h of rest) {
      if (h.offset !== at)
        return `${h.what} starts at byte ${h.offset}, but the block before it ends at byte ${at}`;
      at = h.offset + h.size + TRAILER;
    }
    if (at !== table.footerAt)
      return `the blocks end at byte ${at}, but the footer starts at byte ${table.footerAt}`;
    return undefined;
  } catch (error) {
    if (error instanceof RangeError) return error.message;
    throw error;
  }
}
