import { crc32 } from "node:zlib";

/**
 * Row checksums. Every row that holds a value carries `crc`: the CRC-32
 * (zlib's polynomial) of the UTF-8 text of its content column (a record's
 * JSON, a revision's content), then a newline, then the row's other checked
 * columns written as JSON values separated by commas (integers, `null`,
 * quoted strings). A flipped byte in what a read returns (the JSON, the key,
 * a seq) no longer matches, so reading it fails with `StorageCorrupted`
 * instead of returning different data.
 *
 * One CRC call per row, over the content and the column text together: the
 * call itself costs about as much as the bytes for a small record, so a
 * second call for the columns would nearly double the price of a read.
 */
export function rowCrc(content: string, columns: string): number {
  return crc32(content + columns);
}

/** True when the row's stored checksum matches its content and columns. */
export function rowMatches(stored: unknown, content: unknown, columns: string): boolean {
  return typeof content === "string" && crc32(content + columns) === stored;
}

/** A text column as JSON: quoted, or `null`. Revision kinds, the common case, skip the serialiser. */
export const q = (value: string | null): string =>
  value === "delta"
    ? '"delta"'
    : value === "base"
      ? '"base"'
      : value === null
        ? "null"
        : JSON.stringify(value);

/**
 * The column text of each table's checksum: `\n` then the checked columns
 * besides the content, in this order. The key is always in (a row served
 * under another id fails), and so is every column that is data of its own
 * (an entry's seq, a document's seqs and version, a revision's kind). The
 * columns copied out of the record only to be indexed (an entry's
 * conversation, a task's status) are not: the reads check the record they
 * return against the query that found it instead, which also catches a
 * damaged index. Integers are written as themselves, so a value read back
 * with another type or value no longer matches.
 */
export const columnText = {
  conversation: (id: number) => `\n${id}`,
  /** `prev` / `prevHead`: the entry (and, for a head, the head) before it in its conversation, 0 for none. */
  entry: (id: number, commitSeq: number, prev: number, prevHead: number) =>
    `\n${id},${commitSeq},${prev},${prevHead}`,
  task: (id: number) => `\n${id}`,
  submission: (id: number) => `\n${id}`,
  /** The parts of a document row fixed at creation; `record` is the content (it holds kind, key and scope). */
  document: (id: number, rewindable: number, createdAt: number) =>
    `\n${id},${rewindable},${createdAt}`,
  /** The parts of a document row later batches change (a new base, retirement): `state_crc`, no content. */
  documentState: (id: number, version: number, baseSeq: number, retiredAt: number | null) =>
    `\n${id},${version},${baseSeq},${retiredAt}`,
  /** `prevSeq`: the seq of the document's revision before this one, 0 for its first. */
  revision: (documentId: number, seq: number, kind: string, version: number, prevSeq: number) =>
    `\n${documentId},${seq},${q(kind)},${version},${prevSeq}`,
  /** A counter row (`ids`): no content. */
  counter: (name: string, value: number) => `\n${q(name)},${value}`,
  /**
   * A row of `tips`, no content: the newest end of a chain (a conversation's
   * newest entry and head, a document's newest revision) or the seq counter.
   */
  tip: (id: number, chain: TipChain, newest: number, newestHead: number) =>
    `\n${id},"${chain}",${newest},${newestHead}`,
};

/** What a `tips` row is the end of: `seq` is the seq counter (id 0). */
export type TipChain = "entries" | "revisions" | "seq";
