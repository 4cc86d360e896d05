import { StorageCorrupted } from "@durably/core";
import { decodeCounters, readMarkerPayload } from "./commit-chain.js";
import { unframe } from "./framing.js";
import { K, trailingNumber } from "./keys.js";
import { parseWriteBatch, type BatchOp } from "./leveldb/write-batch.js";

/**
 * What one LevelDB write batch (one log record) says about Durably's
 * commits: every commit call is one write carrying its marker
 * `l/<first seq>` and `m/counters`, so a record holding them is a commit
 * call, and its counters name the last seq it stored and its marker's link.
 */

export interface LogWrite {
  ops: BatchOp[];
  /** The counters this write stored, when it is a Durably commit call. */
  counters?: { seq: number; link: string };
  /** Its commit marker: the first seq it stored and the link to the write before it. */
  marker?: { key: string; first: number; prev: string };
}

const decoder = new TextDecoder("utf-8", { fatal: false });
const COUNTERS = new TextEncoder().encode(K.counters);
const MARKERS = new TextEncoder().encode(K.markers);

function equals(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function startsWith(a: Uint8Array, prefix: Uint8Array): boolean {
  if (a.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (a[i] !== prefix[i]) return false;
  return true;
}

/**
 * Reads the record at index `index` of the log `file`. A record LevelDB
 * would replay but that is not a write batch is `StorageCorrupted` naming
 * the file and the record.
 */
export function readLogWrite(record: Uint8Array, file: string, index: number): LogWrite {
  const where = `${file}: write ${index + 1} of the log`;
  let ops: BatchOp[];
  try {
    ops = parseWriteBatch(record).ops;
  } catch (error) {
    throw new StorageCorrupted(
      `${where} is not a LevelDB write batch (${(error as Error).message}); nothing was opened or changed`,
      { file },
      { cause: error },
    );
  }
  const write: LogWrite = { ops };
  for (const op of ops) {
    if (op.type !== "put") continue;
    if (equals(op.key, COUNTERS)) {
      const counters = readCounters(op.value);
      if (counters !== undefined) write.counters = counters;
    } else if (startsWith(op.key, MARKERS)) {
      const marker = readMarker(op.value, decoder.decode(op.key));
      if (marker !== undefined) write.marker = marker;
    }
  }
  return write;
}

/**
 * The counters of the last `m/counters` put in a write batch, if it has one
 * that decodes: what the live logs are read for at every open, so the
 * batch is walked in place, without building its operations. A batch that
 * does not parse holds none (the log checks have already vouched for it).
 */
export function newestCounters(record: Uint8Array): { seq: number; link: string } | undefined {
  if (record.length < 12) return undefined;
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const count = view.getUint32(8, true);
  let pos = 12;
  const varint = (): number => {
    let result = 0;
    for (let scale = 1; scale <= 2 ** 28; scale *= 128) {
      if (pos >= record.length) return -1;
      const b = record[pos++] as number;
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
    }
    return -1;
  };
  let value: Uint8Array | undefined;
  for (let i = 0; i < count; i++) {
    if (pos >= record.length) return undefined;
    const tag = record[pos++];
    const keyLength = varint();
    if (keyLength < 0 || pos + keyLength > record.length) return undefined;
    const isCounters = keyLength === COUNTERS.length && sameAt(record, pos, COUNTERS);
    pos += keyLength;
    if (tag !== 1) continue;
    const valueLength = varint();
    if (valueLength < 0 || pos + valueLength > record.length) return undefined;
    if (isCounters) value = record.subarray(pos, pos + valueLength);
    pos += valueLength;
  }
  return value === undefined ? undefined : readCounters(value);
}

function sameAt(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/*
 * Values that do not decode (a store of another format, or not Durably's)
 * say nothing about commits here: the open's own checks report them.
 */

function readCounters(value: Uint8Array): { seq: number; link: string } | undefined {
  try {
    const counters = decodeCounters(unframe(K.counters, decoder.decode(value)));
    return { seq: counters.seq, link: counters.link };
  } catch (error) {
    if (error instanceof StorageCorrupted) return undefined;
    throw error;
  }
}

function readMarker(
  value: Uint8Array,
  key: string,
): { key: string; first: number; prev: string } | undefined {
  const first = trailingNumber(key);
  if (first === undefined) return undefined;
  try {
    const { prev } = readMarkerPayload(key, unframe(key, decoder.decode(value)));
    return { key, first, prev };
  } catch (error) {
    if (error instanceof StorageCorrupted) return undefined;
    throw error;
  }
}
