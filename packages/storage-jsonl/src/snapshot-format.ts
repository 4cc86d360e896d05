import {
  isPositiveSafeInteger,
  type ConversationRecord,
  type DocumentRecord,
  type EntryRecord,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { checkBatchShape } from "@durably/core/storage";
import type { LineCursor } from "./line-cursor.js";
import { CRC_MEMBER, crc32Text, crcMember, crcMemberAt, lineChecksum } from "./line-checksum.js";
import { LineError } from "./line-format.js";

/**
 * The snapshot file of a generation (`gen-<n>/snapshot.jsonl`): the tables
 * of the index at one seq, one JSON object per line, each ending with the
 * same `"crc"` member as log lines. The first line is the header (it alone
 * carries `format`); the last line is `end`, with the number of lines, so a
 * snapshot cut at a line boundary is told from a whole one.
 *
 *   {"format":3,"type":"snapshot","generation":2,"seq":812,"ids":940,"crc":…}
 *   {"type":"conversation","value":{…},"crc":…}
 *   {"type":"entry","seq":17,"value":{…},"crc":…}          seq: the entry's commit seq
 *   {"type":"task","value":{…},"crc":…}                    every task, live or terminal
 *   {"type":"submission","value":{…},"crc":…}
 *   {"type":"document","record":{…},"currentOnly":true,"refs":[[seq,ordinal],…],"crc":…}
 *   {"type":"end","lines":1234,"crc":…}
 *
 * A document's `refs` are the sidecar records of `gen-<n>/doc-<id>.jsonl`
 * the snapshot confirms, in file order (copied with their own seq and
 * ordinal); later records are confirmed by markers of the generation's tail.
 */
export const SNAPSHOT_FORMAT = 3;
export const SNAPSHOT_FILE = "snapshot.jsonl";

export interface SnapshotHeader {
  generation: number;
  seq: number;
  ids: number;
}

export type SnapshotLine =
  | { type: "conversation"; value: ConversationRecord }
  | { type: "entry"; seq: number; value: EntryRecord }
  | { type: "task"; value: TaskRecord }
  | { type: "submission"; value: SubmissionRecord }
  | {
      type: "document";
      record: DocumentRecord;
      currentOnly: boolean;
      refs: [seq: number, ordinal: number][];
    }
  | { type: "end"; lines: number };

function withCrc(json: string): string {
  return `${json.slice(0, -1)},"crc":${crc32Text(json)}}\n`;
}

export function encodeSnapshotHeader(header: SnapshotHeader): string {
  return withCrc(
    `{"format":${SNAPSHOT_FORMAT},"type":"snapshot","generation":${header.generation},"seq":${header.seq},"ids":${header.ids}}`,
  );
}

export function encodeSnapshotLine(line: SnapshotLine): string {
  return withCrc(JSON.stringify(line));
}

/**
 * JSON, then checksum (over the text without its `crc` member). With `at`
 * (the cursor standing on this line) the checksum runs over the line's own
 * bytes, with no re-encoding of the text (a line is the UTF-8 of its text).
 */
function parseChecked(text: string, at?: LineCursor): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LineError(`not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new LineError("not a JSON object");
  const line = value as Record<string, unknown>;
  // The parsed `crc` must be the last member as written: a 32-bit integer, its digits right before `}`.
  const crcAt = crcMemberAt(text, line.crc);
  if (crcAt < 0) throw new LineError(`no "crc" checksum as its last field`);
  const crc = lineChecksum(text, crcAt, at);
  if (crc !== line.crc) throw new LineError("checksum mismatch: the line was changed or damaged");
  return line;
}

/** Checks the members of a line (its `crc` aside). */
function keys(what: string, value: Record<string, unknown>, expected: readonly string[]): void {
  // Fast path, with no array made: the writer emits the members in this order, `crc` last.
  let i = 0;
  let same = true;
  for (const key in value) {
    if (key !== (i < expected.length ? expected[i] : "crc")) {
      same = false;
      break;
    }
    i++;
  }
  if (same && i === expected.length + 1) return;
  const actual = Object.keys(value).filter((key) => key !== "crc");
  for (const key of actual)
    if (!expected.includes(key))
      throw new LineError(`${what}: unexpected field ${JSON.stringify(key)}`);
  for (const key of expected)
    if (!(key in value)) throw new LineError(`${what}: missing field ${JSON.stringify(key)}`);
}

/** Decodes the header; a format above this version's is a `LineError` carrying it. */
export function decodeSnapshotHeader(text: string, at?: LineCursor): SnapshotHeader {
  const line = parseChecked(text, at);
  const format = line.format;
  if (typeof format === "number" && format > SNAPSHOT_FORMAT)
    throw new LineError(
      `format ${format} is not understood by this version (it reads snapshots of format ${SNAPSHOT_FORMAT})`,
      format,
    );
  if (format !== SNAPSHOT_FORMAT || line.type !== "snapshot")
    throw new LineError(`not a snapshot header of format ${SNAPSHOT_FORMAT}`);
  keys("snapshot header", line, ["format", "type", "generation", "seq", "ids"]);
  const { generation, seq, ids } = line;
  if (!isPositiveSafeInteger(generation) || !isPositiveSafeInteger(ids))
    throw new LineError("bad generation or ids");
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0)
    throw new LineError("bad seq");
  return { generation, seq, ids };
}

function shapeProblem(write: StorageWrite): void {
  const problem = checkBatchShape([write]);
  if (problem !== undefined) throw new LineError(problem.message);
}

function isRef(value: unknown): value is [number, number] {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    isPositiveSafeInteger(value[0]) &&
    Number.isSafeInteger(value[1]) &&
    (value[1] as number) >= 0
  );
}

/** Decodes a body line (or `end`), checking its checksum and shape; `at` as for the header. */
export function decodeSnapshotLine(text: string, at?: LineCursor): SnapshotLine {
  const line = parseChecked(text, at);
  switch (line.type) {
    case "conversation":
    case "task":
    case "submission":
      keys(line.type, line, ["type", "value"]);
      shapeProblem(line as unknown as StorageWrite);
      break;
    case "entry":
      keys("entry", line, ["type", "seq", "value"]);
      if (!isPositiveSafeInteger(line.seq)) throw new LineError("entry: bad seq");
      // The line itself is an entry write (`type`, `value`), as the other tables' lines are.
      shapeProblem(line as unknown as StorageWrite);
      break;
    case "document": {
      keys("document", line, ["type", "record", "currentOnly", "refs"]);
      const record = line.record as DocumentRecord | null;
      if (typeof record !== "object" || record === null)
        throw new LineError("document: bad record");
      const { createdAt, retiredAt, ...rest } = record;
      if (!isPositiveSafeInteger(createdAt)) throw new LineError("document: bad createdAt");
      if (retiredAt !== undefined && !isPositiveSafeInteger(retiredAt))
        throw new LineError("document: bad retiredAt");
      shapeProblem({
        type: "document.create",
        record: rest,
        content: { kind: "base", version: 1, value: null },
      });
      if (typeof line.currentOnly !== "boolean") throw new LineError("document: bad currentOnly");
      if (!Array.isArray(line.refs) || !line.refs.every(isRef))
        throw new LineError("document: refs must be [seq, ordinal] pairs");
      break;
    }
    case "end":
      keys("end", line, ["type", "lines"]);
      if (!isPositiveSafeInteger(line.lines)) throw new LineError("end: bad line count");
      break;
    default:
      throw new LineError(`unknown snapshot line type ${JSON.stringify(line.type)}`);
  }
  return line as unknown as SnapshotLine;
}

/** What open indexes an entry line by, read from its text (see `glanceEntryLine`). */
export interface EntryGlance {
  seq: number;
  id: number;
  conversationId: number;
  /** Where the line's checksum member starts, and the checksum it gives. */
  crcAt: number;
  crc: number;
}

const ENTRY_HEAD = '{"type":"entry","seq":';
const ENTRY_ID = ',"value":{"id":';
const ENTRY_CONVERSATION = ',"conversationId":';
const COMMA = 44;
const CLOSE = 125;

/** The end of the digits `positiveAt` read last. */
let digitsEnd = 0;

/** The positive safe integer whose digits (no leading zero) start at `from`, or -1; sets `digitsEnd`. */
function positiveAt(text: string, from: number): number {
  let value = 0;
  let i = from;
  for (; i < text.length && i - from <= 16; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) break;
    if (digit === 0 && i === from) return -1;
    value = value * 10 + digit;
  }
  digitsEnd = i;
  return i === from || !Number.isSafeInteger(value) ? -1 : value;
}

/**
 * Reads an entry line laid out as this version writes it, with no parse:
 * `{"type":"entry","seq":S,"value":{"id":I,"conversationId":C,…},"crc":N}`,
 * with no `"head"` anywhere in it. Undefined for any other line (a line
 * with a head, members in another order, another type, damage): those are
 * decoded whole. What this reads is all open needs to index the entry; the
 * caller checks the checksum it gives over the line's bytes, and the
 * entry's first read decodes the line whole and checks it gives the same
 * (`checkGlance`).
 */
export function glanceEntryLine(text: string): EntryGlance | undefined {
  if (!text.startsWith(ENTRY_HEAD)) return undefined;
  const seq = positiveAt(text, ENTRY_HEAD.length);
  if (seq < 0 || !text.startsWith(ENTRY_ID, digitsEnd)) return undefined;
  const id = positiveAt(text, digitsEnd + ENTRY_ID.length);
  if (id < 0 || !text.startsWith(ENTRY_CONVERSATION, digitsEnd)) return undefined;
  const conversationId = positiveAt(text, digitsEnd + ENTRY_CONVERSATION.length);
  const after = text.charCodeAt(digitsEnd);
  if (conversationId < 0 || (after !== COMMA && after !== CLOSE)) return undefined;
  // A head must be indexed; it could only be told by a parse.
  if (text.includes('"head"')) return undefined;
  const member = crcMember(text);
  if (member === undefined) return undefined;
  return { seq, id, conversationId, crcAt: member.at, crc: member.value };
}

const ENTRY_HEAD_BYTES = Buffer.from(ENTRY_HEAD);
const ENTRY_ID_BYTES = Buffer.from(ENTRY_ID);
const ENTRY_CONVERSATION_BYTES = Buffer.from(ENTRY_CONVERSATION);
const CRC_MEMBER_BYTES = Buffer.from(CRC_MEMBER);

/** `head"`, searched for rather than `"head"`: a quote is in every few bytes of JSON, an `h` seldom. */
const HEAD_TAIL = Buffer.from('head"');
const QUOTE = 34;

/**
 * Where the first `"head"` at or after `from` is in `bytes`, or -1. UTF-8
 * has these bytes exactly where the text has these characters (a byte
 * below 128 is always the character it codes).
 */
export function headAt(
  bytes: Uint8Array & { indexOf(value: Uint8Array, from: number): number },
  from: number,
): number {
  for (let at = bytes.indexOf(HEAD_TAIL, from + 1); at >= 0; at = bytes.indexOf(HEAD_TAIL, at + 1))
    if (bytes[at - 1] === QUOTE) return at - 1;
  return -1;
}

/** Bytes of `"head"`. */
const HEAD_LENGTH = 6;

/** Whether `bytes` hold `literal` at `at` (`at + literal.length <= end`). */
function bytesAt(bytes: Uint8Array, at: number, end: number, literal: Uint8Array): boolean {
  if (at + literal.length > end) return false;
  for (let i = 0; i < literal.length; i++) if (bytes[at + i] !== literal[i]) return false;
  return true;
}

/** As `positiveAt`, over `bytes[from, end)`; sets `digitsEnd`. */
function positiveBytesAt(bytes: Uint8Array, from: number, end: number): number {
  let value = 0;
  let i = from;
  for (; i < end && i - from <= 16; i++) {
    const digit = (bytes[i] as number) - 48;
    if (digit < 0 || digit > 9) break;
    if (digit === 0 && i === from) return -1;
    value = value * 10 + digit;
  }
  digitsEnd = i;
  return i === from || !Number.isSafeInteger(value) ? -1 : value;
}

/**
 * What `glanceEntryBytes` read last (one object, reused: read it before the
 * next call). `crcAt` is the byte offset where the checksum member starts.
 */
export const glancedBytes: EntryGlance = { seq: 0, id: 0, conversationId: 0, crcAt: 0, crc: 0 };

/**
 * `glanceEntryLine` over the line's UTF-8 bytes, `bytes[start, end)` (`end`
 * its `\n` or the end of the bytes), with no string of it: true (and
 * `glancedBytes` filled) exactly when `glanceEntryLine` of its text gives a
 * glance, the same one. `head` is where the first `"head"` at or after
 * `start` is in `bytes` (-1 for none): a caller walking many lines of one
 * buffer searches once per occurrence, not once per line.
 */
export function glanceEntryBytes(
  bytes: Uint8Array,
  start: number,
  end: number,
  head: number,
): boolean {
  if (!bytesAt(bytes, start, end, ENTRY_HEAD_BYTES)) return false;
  const seq = positiveBytesAt(bytes, start + ENTRY_HEAD_BYTES.length, end);
  if (seq < 0 || !bytesAt(bytes, digitsEnd, end, ENTRY_ID_BYTES)) return false;
  const id = positiveBytesAt(bytes, digitsEnd + ENTRY_ID_BYTES.length, end);
  if (id < 0 || !bytesAt(bytes, digitsEnd, end, ENTRY_CONVERSATION_BYTES)) return false;
  const conversationId = positiveBytesAt(bytes, digitsEnd + ENTRY_CONVERSATION_BYTES.length, end);
  const after = digitsEnd < end ? bytes[digitsEnd] : -1;
  if (conversationId < 0 || (after !== COMMA && after !== CLOSE)) return false;
  // A head must be indexed; it could only be told by a parse.
  if (head >= start && head + HEAD_LENGTH <= end) return false;
  // The checksum member, read back from the final brace as `crcMember` does.
  const last = end - 1;
  if (last <= start || bytes[last] !== CLOSE) return false;
  let crc = 0;
  let scale = 1;
  let from = last;
  for (; from > last - 11 && from > start; from--) {
    const digit = (bytes[from - 1] as number) - 48;
    if (digit < 0 || digit > 9) break;
    crc += digit * scale;
    scale *= 10;
  }
  const crcAt = from - CRC_MEMBER_BYTES.length;
  if (
    from === last ||
    last - from > 10 ||
    crcAt < start ||
    !bytesAt(bytes, crcAt, end, CRC_MEMBER_BYTES) ||
    crc > 0xffffffff
  )
    return false;
  const glance = glancedBytes;
  glance.seq = seq;
  glance.id = id;
  glance.conversationId = conversationId;
  glance.crcAt = crcAt;
  glance.crc = crc;
  return true;
}

/** Whether a decoded entry line gives what `glanceEntryLine` read from its text (no head included). */
export function checkGlance(
  line: { seq: number; value: EntryRecord },
  glance: EntryGlance,
): string | undefined {
  const { value } = line;
  if (value.id !== glance.id) return `the line gives entry ${value.id}, not ${glance.id}`;
  if (line.seq !== glance.seq || value.conversationId !== glance.conversationId)
    return `entry ${value.id}: its seq or conversation differs from the one its text starts with`;
  if (value.head !== undefined) return `entry ${value.id}: a head that its text does not show`;
  return undefined;
}
