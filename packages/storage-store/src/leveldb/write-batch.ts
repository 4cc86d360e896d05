import { ByteReader } from "./bytes.js";

/**
 * LevelDB's write batch, the payload of each write-ahead log record: a
 * fixed64 sequence number, a fixed32 count, then `count` operations, each a
 * tag byte (1: put, 0: delete), a length-prefixed key and, for a put, a
 * length-prefixed value. Durably reads it to learn which commits a log holds
 * and, when LevelDB skipped a log, to apply its writes again.
 */

export type BatchOp =
  { type: "put"; key: Uint8Array; value: Uint8Array } | { type: "del"; key: Uint8Array };

export interface WriteBatch {
  /** LevelDB's sequence number of the first operation. */
  sequence: number;
  ops: BatchOp[];
}

const HEADER = 12;
const PUT = 1;
const DEL = 0;

/** Parses one log record; a malformed batch throws `RangeError`. */
export function parseWriteBatch(record: Uint8Array): WriteBatch {
  if (record.length < HEADER)
    throw new RangeError(`a write batch of ${record.length} bytes is shorter than its header`);
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const sequence = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  const count = view.getUint32(8, true);
  const r = new ByteReader(record, HEADER);
  const ops: BatchOp[] = [];
  for (let i = 0; i < count; i++) {
    const tag = r.byte();
    if (tag === PUT) {
      const key = r.prefixed();
      ops.push({ type: "put", key, value: r.prefixed() });
    } else if (tag === DEL) ops.push({ type: "del", key: r.prefixed() });
    else throw new RangeError(`operation ${i} has an unknown tag ${tag}`);
  }
  if (!r.done)
    throw new RangeError(`${record.length - r.pos} bytes follow the batch's ${count} operations`);
  return { sequence, ops };
}
