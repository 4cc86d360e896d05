import { crcBytes } from "../crc32c.js";

/**
 * A check of a LevelDB write-ahead log (`NNNNNN.log`) before LevelDB
 * replays it. The format is LevelDB's documented log format: 32 KiB blocks
 * of records, each with a 7-byte header (masked CRC-32C of type and data,
 * data length, type: full, first, middle, last) and the data; a block's last
 * 6 bytes or fewer are padding.
 *
 * LevelDB's replay skips a record it cannot read (and the rest of its block)
 * and goes on with the records after it; classic-level gives no way to make
 * that an error. Durably reads the log first and refuses to open when a
 * record is damaged, so the damaged log is kept as evidence instead of being
 * replayed with a hole and deleted. Only a torn tail is accepted: the file
 * ending inside a record, or zeros from some point to the end (a write cut
 * short by a crash, never acknowledged).
 */

const BLOCK = 32768;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

export interface LogDamage {
  /** Byte offset of the damaged record in the file. */
  offset: number;
  reason: string;
  /** Complete records after the damage that LevelDB would still replay: more than 0 makes a hole. */
  recordsAfter: number;
}

export interface LogCheck {
  /** Complete logical records (write batches, or MANIFEST version edits) before any damage. */
  records: number;
  /** Their bytes, when asked for: each record as its fragments, in order (`joinFragments` makes one array). */
  contents: Uint8Array[][];
  /** The first damaged record, if any. */
  damage?: LogDamage;
  /** Offset where a torn tail starts (accepted), if the file has one. */
  tornAt?: number;
}

function unmask(masked: number): number {
  const rot = (masked - 0xa282ead8) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}

function zerosFrom(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** A record's bytes from its fragments (no copy for a record of one fragment). */
export function joinFragments(fragments: readonly Uint8Array[]): Uint8Array {
  if (fragments.length === 1) return fragments[0] as Uint8Array;
  const whole = new Uint8Array(fragments.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of fragments) {
    whole.set(f, at);
    at += f.length;
  }
  return whole;
}

/**
 * Reads a log (or MANIFEST, same format) as LevelDB would, noting what
 * LevelDB would skip; `collect` keeps the records' fragments (views of
 * `bytes`, nothing copied).
 */
export function checkLog(bytes: Uint8Array, collect = false): LogCheck {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let records = 0;
  const contents: Uint8Array[][] = [];
  let fragments: Uint8Array[] = [];
  let damage: Omit<LogDamage, "recordsAfter"> | undefined;
  let after = 0;
  let fragmentStart: number | undefined;
  let pos = 0;
  const result = (tornAt?: number): LogCheck => {
    const out: LogCheck = { records, contents };
    if (damage !== undefined) out.damage = { ...damage, recordsAfter: after };
    else if (tornAt !== undefined) out.tornAt = tornAt;
    return out;
  };
  /** Records the first damage and, like LevelDB, drops the rest of the block. */
  const skip = (offset: number, reason: string, blockEnd: number) => {
    damage ??= { offset, reason };
    fragmentStart = undefined;
    fragments = [];
    pos = blockEnd;
  };
  const complete = (last: Uint8Array) => {
    if (damage !== undefined) {
      after++;
      return;
    }
    records++;
    if (!collect) return;
    fragments.push(last);
    contents.push(fragments);
    fragments = [];
  };
  while (pos < bytes.length) {
    const blockEnd = Math.min(bytes.length, (Math.floor(pos / BLOCK) + 1) * BLOCK);
    if (blockEnd - pos < HEADER) {
      // Block padding; if the file ends here, a header was cut short.
      pos = blockEnd;
      continue;
    }
    const stored = view.getUint32(pos, true);
    const length = view.getUint16(pos + 4, true);
    const type = bytes[pos + 6] as number;
    if (stored === 0 && length === 0 && type === 0) {
      if (zerosFrom(bytes, pos)) return result(pos);
      skip(pos, "zeroed bytes followed by more data", blockEnd);
      continue;
    }
    const end = pos + HEADER + length;
    if (end > blockEnd) {
      if (blockEnd === bytes.length) return result(pos);
      skip(pos, `record length ${length} runs past its block`, blockEnd);
      continue;
    }
    const crc = crcBytes(crcBytes(0, bytes, pos + 6, pos + 7), bytes, pos + HEADER, end);
    if (crc !== unmask(stored)) {
      if (zerosFrom(bytes, pos + HEADER)) return result(pos);
      skip(pos, "record checksum mismatch", blockEnd);
      continue;
    }
    const data = bytes.subarray(pos + HEADER, end);
    if (type === FULL || type === FIRST) {
      if (fragmentStart !== undefined)
        damage ??= { offset: fragmentStart, reason: "a fragmented record has no last fragment" };
      fragments = [];
      fragmentStart = undefined;
      if (type === FULL) complete(data);
      else {
        fragmentStart = pos;
        if (collect) fragments.push(data);
      }
    } else if (type === MIDDLE || type === LAST) {
      if (fragmentStart === undefined)
        damage ??= { offset: pos, reason: "a record fragment has no first fragment" };
      else if (type === LAST) {
        complete(data);
        fragmentStart = undefined;
      } else if (collect) fragments.push(data);
    } else damage ??= { offset: pos, reason: `unknown record type ${type}` };
    pos = end;
  }
  return result(fragmentStart);
}
