import {
  isPositiveSafeInteger,
  type ConversationRecord,
  type DocumentContent,
  type EntryRecord,
  type NewDocumentRecord,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { checkBatchShape } from "@durably/core/storage";
import type { LineCursor } from "./line-cursor.js";
import { crc32Text, crcMemberAt, lineChecksum } from "./line-checksum.js";

/**
 * The line formats of the JSONL files: one JSON object per line, `\n` terminated.
 *
 *   main.jsonl      {"format":1,"type":"commit","seq":3,"writes":[...],"crc":...}
 *   doc-<id>.jsonl  {"format":2,"type":"record","seq":3,"call":2,"ordinal":0,"payload":{"type":"document",...},"crc":...}
 *   task-<id>.jsonl {"format":2,"type":"record","seq":3,"call":2,"ordinal":1,"payload":{"type":"task",...},"crc":...}
 *
 * Every line ends with `"crc"`: the CRC-32 of the line's JSON without that
 * member, so a flipped byte anywhere in a committed line is caught on open.
 *
 * Record format 2 adds `call`: the first seq of the commit call that wrote
 * the record, so recovery can tell the records of the one call a crash may
 * leave unconfirmed from those of earlier calls whose markers were lost.
 * Format-1 records (no `call`) are still read. Markers are unchanged (format 1).
 */
export const MARKER_FORMAT = 1;
export const RECORD_FORMAT = 2;

export const MAIN_FILE = "main.jsonl";
export const LOCK_FILE = "LOCK";

export function documentFile(id: number): string {
  return `doc-${id}.jsonl`;
}

export function taskFile(id: number): string {
  return `task-${id}.jsonl`;
}

/** `doc-<id>.jsonl` / `task-<id>.jsonl` (and their `.tmp` rewrites) from a directory listing. */
export function parseSidecarName(
  name: string,
): { file: string; temp: boolean; task: boolean; id: number } | undefined {
  const match = /^(doc|task)-([1-9][0-9]*)\.jsonl(\.tmp)?$/.exec(name);
  if (match === null) return undefined;
  return {
    file: `${match[1]}-${match[2]}.jsonl`,
    temp: match[3] !== undefined,
    task: match[1] === "task",
    id: Number(match[2]),
  };
}

/** A write as the commit marker lists it: table writes inline, sidecar content by ordinal. */
export type MarkerWrite =
  | { type: "conversation"; value: ConversationRecord }
  | { type: "entry"; value: EntryRecord }
  | { type: "submission"; value: SubmissionRecord }
  /** A terminal task is inline: it is final, so its sidecar can go. */
  | { type: "task"; value: TaskRecord }
  /** A live task's replacement, stored in `task-<id>.jsonl`. */
  | { type: "task"; id: number; ordinal: number }
  | { type: "document.create"; record: NewDocumentRecord; ordinal: number }
  | {
      type: "document.copy";
      record: NewDocumentRecord;
      source: { id: number; at: number | "current" };
      ordinal: number;
    }
  | { type: "document.change"; id: number; ordinal: number }
  | { type: "document.retire"; id: number };

export interface Marker {
  seq: number;
  writes: MarkerWrite[];
  /** The id high-water mark (highest id minted or written) when it rose in this commit. */
  ids?: number;
}

export type RecordPayload =
  | { type: "document"; id: number; content: DocumentContent }
  | { type: "task"; id: number; value: TaskRecord };

export interface SidecarRecord {
  seq: number;
  /** First seq of the commit call that wrote the record; undefined for a format-1 record. */
  call?: number;
  ordinal: number;
  payload: RecordPayload;
}

function withCrc(json: string): string {
  return `${json.slice(0, -1)},"crc":${crc32Text(json)}}\n`;
}

export function encodeMarker(marker: Marker): string {
  const head = `{"format":${MARKER_FORMAT},"type":"commit","seq":${marker.seq},"writes":${JSON.stringify(marker.writes)}`;
  return withCrc(marker.ids === undefined ? `${head}}` : `${head},"ids":${marker.ids}}`);
}

export function encodeRecord(record: SidecarRecord & { call: number }): string {
  return withCrc(
    `{"format":${RECORD_FORMAT},"type":"record","seq":${record.seq},"call":${record.call},"ordinal":${record.ordinal},"payload":${JSON.stringify(record.payload)}}`,
  );
}

/** Why a complete line cannot be used (the caller adds file and line). */
export class LineError extends Error {
  constructor(
    message: string,
    readonly unknownFormat?: number,
  ) {
    super(message);
  }
}

/**
 * Parses one complete line (without its `\n`): JSON, then format, then
 * checksum, then shape. With `at` (the cursor standing on this line) the
 * checksum runs over the line's own bytes, with no re-encoding of the text;
 * the value is the same, since a line is written as the UTF-8 of the text
 * whose CRC it carries.
 */
function parseLine(
  text: string,
  type: "commit" | "record",
  at?: LineCursor,
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LineError(`not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new LineError("not a JSON object");
  const line = value as Record<string, unknown>;
  // Judged by the line's own type, so a record line in main.jsonl is reported as misplaced, not as a version.
  const own = line.type === "record" || line.type === "commit" ? line.type : type;
  const newest = own === "commit" ? MARKER_FORMAT : RECORD_FORMAT;
  const format = line.format;
  if (typeof format !== "number" || !Number.isInteger(format) || format < 1 || format > newest) {
    if (typeof format === "number")
      throw new LineError(
        `format ${format} is not understood by this version (it reads ${own} lines of format ${newest === 1 ? "1" : `1 to ${newest}`})`,
        format,
      );
    throw new LineError(`no "format" field`);
  }
  const crcAt = crcMemberAt(text, line.crc);
  if (crcAt < 0) throw new LineError(`no "crc" checksum as its last field`);
  const crc = lineChecksum(text, crcAt, at);
  if (crc !== line.crc) throw new LineError("checksum mismatch: the line was changed or damaged");
  if (line.type !== type)
    throw new LineError(`type ${JSON.stringify(line.type)} where a ${type} line belongs`);
  if (!isPositiveSafeInteger(line.seq)) throw new LineError(`seq must be a positive integer`);
  return line;
}

function onlyKeys(what: string, value: Record<string, unknown>, keys: readonly string[]): void {
  const actual = Object.keys(value);
  // Fast path: the writer emits the fields in this order, so a sound line matches them one for one.
  if (actual.length === keys.length) {
    let same = true;
    for (let i = 0; i < keys.length && same; i++) same = actual[i] === keys[i];
    if (same) return;
  }
  for (const key of actual)
    if (!keys.includes(key))
      throw new LineError(`${what}: unexpected field ${JSON.stringify(key)}`);
  for (const key of keys)
    if (!(key in value)) throw new LineError(`${what}: missing field ${JSON.stringify(key)}`);
}

function isOrdinal(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** The write as `checkBatchShape` understands it, to reuse its record checks. */
function shapeOf(write: MarkerWrite): StorageWrite | undefined {
  switch (write.type) {
    case "conversation":
    case "entry":
    case "submission":
      return write;
    case "task":
      return "value" in write ? write : undefined;
    case "document.create":
      return {
        type: "document.create",
        record: write.record,
        content: { kind: "base", version: 1, value: null },
      };
    case "document.copy":
      return { type: "document.copy", record: write.record, source: write.source as never };
    default:
      return undefined;
  }
}

function checkMarkerWrite(raw: unknown, index: number): MarkerWrite {
  const what = `write ${index}`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new LineError(`${what} is not an object`);
  const w = raw as Record<string, unknown>;
  switch (w.type) {
    case "conversation":
    case "entry":
    case "submission":
      onlyKeys(what, w, ["type", "value"]);
      break;
    case "task":
      if ("value" in w) onlyKeys(what, w, ["type", "value"]);
      else {
        onlyKeys(what, w, ["type", "id", "ordinal"]);
        if (!isPositiveSafeInteger(w.id) || !isOrdinal(w.ordinal))
          throw new LineError(`${what}: bad task reference`);
      }
      break;
    case "document.create":
      onlyKeys(what, w, ["type", "record", "ordinal"]);
      break;
    case "document.copy":
      onlyKeys(what, w, ["type", "record", "source", "ordinal"]);
      break;
    case "document.change":
      onlyKeys(what, w, ["type", "id", "ordinal"]);
      if (!isPositiveSafeInteger(w.id)) throw new LineError(`${what}: bad document id`);
      break;
    case "document.retire":
      onlyKeys(what, w, ["type", "id"]);
      if (!isPositiveSafeInteger(w.id)) throw new LineError(`${what}: bad document id`);
      break;
    default:
      throw new LineError(`${what} has unknown type ${JSON.stringify(w.type)}`);
  }
  if ("ordinal" in w && !isOrdinal(w.ordinal)) throw new LineError(`${what}: bad ordinal`);
  const write = w as unknown as MarkerWrite;
  const shape = shapeOf(write);
  if (shape !== undefined) {
    const problem = checkBatchShape([shape]);
    if (problem !== undefined) throw new LineError(`${what}: ${problem.message}`);
  }
  return write;
}

/** Decodes a marker line; pass the cursor standing on it to checksum its bytes directly. */
export function decodeMarker(text: string, at?: LineCursor): Marker {
  const line = parseLine(text, "commit", at);
  const hasIds = "ids" in line;
  onlyKeys("commit marker", line, hasIds ? MARKER_KEYS_WITH_IDS : MARKER_KEYS);
  if (!Array.isArray(line.writes)) throw new LineError(`"writes" must be an array`);
  if (hasIds && !isPositiveSafeInteger(line.ids))
    throw new LineError(`"ids" must be a positive integer`);
  // Checked in place: the parsed array becomes the marker's (it is parsed once, copied never).
  const writes = line.writes as MarkerWrite[];
  let ascending = true;
  let previous = -1;
  for (let i = 0; i < writes.length; i++) {
    const w = checkMarkerWrite(writes[i], i);
    if ("ordinal" in w) {
      if (w.ordinal <= previous) ascending = false;
      previous = w.ordinal;
    }
  }
  // The writer numbers ordinals upwards; only other orders need the duplicate search.
  if (!ascending) {
    const ordinals = new Set<number>();
    for (const w of writes)
      if ("ordinal" in w) {
        if (ordinals.has(w.ordinal)) throw new LineError(`ordinal ${w.ordinal} is listed twice`);
        ordinals.add(w.ordinal);
      }
  }
  return hasIds
    ? { seq: line.seq as number, writes, ids: line.ids as number }
    : { seq: line.seq as number, writes };
}

const MARKER_KEYS = ["format", "type", "seq", "writes", "crc"] as const;
const MARKER_KEYS_WITH_IDS = ["format", "type", "seq", "writes", "ids", "crc"] as const;

function checkContent(value: unknown): DocumentContent {
  const c = value as Record<string, unknown> | null;
  if (typeof c !== "object" || c === null || !isPositiveSafeInteger(c.version))
    throw new LineError("bad document content");
  if (c.kind === "base") onlyKeys("base content", c, ["kind", "version", "value"]);
  else if (c.kind === "delta" && Array.isArray(c.ops))
    onlyKeys("delta content", c, ["kind", "version", "ops"]);
  else throw new LineError("document content must be a base or a delta");
  return c as unknown as DocumentContent;
}

const RECORD_KEYS = ["format", "type", "seq", "call", "ordinal", "payload", "crc"] as const;
const RECORD_KEYS_FORMAT_1 = ["format", "type", "seq", "ordinal", "payload", "crc"] as const;

/** Decodes a sidecar record line (format 2, or format 1 without `call`); `at` as for `decodeMarker`. */
export function decodeRecord(text: string, at?: LineCursor): SidecarRecord {
  const line = parseLine(text, "record", at);
  const withCall = line.format !== 1;
  onlyKeys("record", line, withCall ? RECORD_KEYS : RECORD_KEYS_FORMAT_1);
  if (withCall && (!isPositiveSafeInteger(line.call) || line.call > (line.seq as number)))
    throw new LineError(`"call" must be a positive integer not above the record's seq`);
  if (!isOrdinal(line.ordinal)) throw new LineError("bad ordinal");
  const p = line.payload as Record<string, unknown> | null;
  if (typeof p !== "object" || p === null || !isPositiveSafeInteger(p.id))
    throw new LineError("bad payload");
  if (p.type === "document") {
    onlyKeys("payload", p, ["type", "id", "content"]);
    checkContent(p.content);
  } else if (p.type === "task") {
    onlyKeys("payload", p, ["type", "id", "value"]);
    const problem = checkBatchShape([{ type: "task", value: p.value as TaskRecord }]);
    if (problem !== undefined) throw new LineError(`payload: ${problem.message}`);
    if ((p.value as TaskRecord).id !== p.id)
      throw new LineError("payload id differs from the task's id");
  } else throw new LineError(`payload has unknown type ${JSON.stringify(p.type)}`);
  const payload = p as unknown as RecordPayload;
  return withCall
    ? { seq: line.seq as number, call: line.call as number, ordinal: line.ordinal, payload }
    : { seq: line.seq as number, ordinal: line.ordinal, payload };
}
