import { crc32 } from "node:zlib";
import {
  checkBatchShape,
  isPositiveSafeInteger,
  type ConversationRecord,
  type DocumentContent,
  type EntryRecord,
  type NewDocumentRecord,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";

/**
 * Format 1 of the JSONL files: one JSON object per line, `\n` terminated.
 *
 *   main.jsonl      {"format":1,"type":"commit","seq":3,"writes":[...],"crc":...}
 *   doc-<id>.jsonl  {"format":1,"type":"record","seq":3,"ordinal":0,"payload":{"type":"document",...},"crc":...}
 *   task-<id>.jsonl {"format":1,"type":"record","seq":3,"ordinal":1,"payload":{"type":"task",...},"crc":...}
 *
 * Every line ends with `"crc"`: the CRC-32 of the line's JSON without that
 * member, so a flipped byte anywhere in a committed line is caught on open.
 */
export const FORMAT = 1;

export const MAIN_FILE = "main.jsonl";
export const LOCK_FILE = "LOCK";

export function documentFile(id: number): string {
  return `doc-${id}.jsonl`;
}

export function taskFile(id: number): string {
  return `task-${id}.jsonl`;
}

/** `doc-<id>.jsonl` / `task-<id>.jsonl` (and their `.tmp` rewrites) from a directory listing. */
export function parseSidecarName(name: string): { file: string; temp: boolean } | undefined {
  const match = /^(doc|task)-([1-9][0-9]*)\.jsonl(\.tmp)?$/.exec(name);
  if (match === null) return undefined;
  return { file: `${match[1]}-${match[2]}.jsonl`, temp: match[3] !== undefined };
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
  ordinal: number;
  payload: RecordPayload;
}

function withCrc(json: string): string {
  return `${json.slice(0, -1)},"crc":${crc32(json)}}\n`;
}

export function encodeMarker(marker: Marker): string {
  const head = `{"format":${FORMAT},"type":"commit","seq":${marker.seq},"writes":${JSON.stringify(marker.writes)}`;
  return withCrc(marker.ids === undefined ? `${head}}` : `${head},"ids":${marker.ids}}`);
}

export function encodeRecord(record: SidecarRecord): string {
  return withCrc(
    `{"format":${FORMAT},"type":"record","seq":${record.seq},"ordinal":${record.ordinal},"payload":${JSON.stringify(record.payload)}}`,
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

const CRC_MEMBER = ',"crc":';

/** Parses one complete line (without its `\n`): JSON, then format, then checksum, then shape. */
function parseLine(text: string, type: "commit" | "record"): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LineError(`not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new LineError("not a JSON object");
  const line = value as Record<string, unknown>;
  if (line.format !== FORMAT) {
    if (typeof line.format === "number")
      throw new LineError(
        `format ${line.format} is not understood by this version (it reads format ${FORMAT})`,
        line.format,
      );
    throw new LineError(`no "format" field`);
  }
  const at = text.lastIndexOf(CRC_MEMBER);
  const digits = at < 0 ? "" : text.slice(at + CRC_MEMBER.length, -1);
  if (!/^[0-9]{1,10}$/.test(digits) || !text.endsWith("}") || line.crc !== Number(digits))
    throw new LineError(`no "crc" checksum as its last field`);
  if (crc32(`${text.slice(0, at)}}`) !== line.crc)
    throw new LineError("checksum mismatch: the line was changed or damaged");
  if (line.type !== type)
    throw new LineError(`type ${JSON.stringify(line.type)} where a ${type} line belongs`);
  if (!isPositiveSafeInteger(line.seq)) throw new LineError(`seq must be a positive integer`);
  return line;
}

function onlyKeys(what: string, value: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of Object.keys(value))
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

export function decodeMarker(text: string): Marker {
  const line = parseLine(text, "commit");
  onlyKeys(
    "commit marker",
    line,
    "ids" in line
      ? ["format", "type", "seq", "writes", "ids", "crc"]
      : ["format", "type", "seq", "writes", "crc"],
  );
  if (!Array.isArray(line.writes)) throw new LineError(`"writes" must be an array`);
  if ("ids" in line && !isPositiveSafeInteger(line.ids))
    throw new LineError(`"ids" must be a positive integer`);
  const writes = line.writes.map((w, i) => checkMarkerWrite(w, i));
  const ordinals = new Set<number>();
  for (const w of writes)
    if ("ordinal" in w) {
      if (ordinals.has(w.ordinal)) throw new LineError(`ordinal ${w.ordinal} is listed twice`);
      ordinals.add(w.ordinal);
    }
  return { seq: line.seq as number, writes, ...("ids" in line ? { ids: line.ids as number } : {}) };
}

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

export function decodeRecord(text: string): SidecarRecord {
  const line = parseLine(text, "record");
  onlyKeys("record", line, ["format", "type", "seq", "ordinal", "payload", "crc"]);
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
  return { seq: line.seq as number, ordinal: line.ordinal, payload: p as unknown as RecordPayload };
}

/** One complete line of a file: its text (no `\n`), 1-based number and byte range. */
export interface RawLine {
  text: string;
  line: number;
  offset: number;
  length: number;
}

/**
 * Splits file bytes into complete lines plus the offset where an
 * unterminated tail starts (`bytes.length` when the file ends with `\n`).
 */
export function splitLines(
  bytes: Uint8Array,
  baseOffset = 0,
  baseLine = 1,
): { lines: RawLine[]; end: number } {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const lines: RawLine[] = [];
  let start = 0;
  let line = baseLine;
  for (;;) {
    const nl = bytes.indexOf(10, start);
    if (nl < 0) break;
    lines.push({
      text: decoder.decode(bytes.subarray(start, nl)),
      line,
      offset: baseOffset + start,
      length: nl + 1 - start,
    });
    start = nl + 1;
    line++;
  }
  return { lines, end: baseOffset + start };
}
