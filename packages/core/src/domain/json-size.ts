import { ValueTooLarge } from "./errors.js";
import type { Json } from "./json.js";

/**
 * The largest value written into a transaction, in bytes of its JSON text
 * (UTF-8, as `JSON.stringify` writes it): an entry field, a task record, a
 * submission's content or detail, a document's whole value, one op. Every
 * backend stores a value this large (JSONL and PostgreSQL build one string
 * per commit, and a JavaScript string holds at most about 512 Mi UTF-16
 * units), so a value one backend accepts, every backend accepts.
 */
export const MAX_VALUE_BYTES = 32 * 1024 * 1024;

/**
 * The most a single commit may write, in bytes of JSON text (the sum of its
 * values): one storage call for one commit stays bounded, and the flusher
 * groups commits into one call only while their sum stays within it.
 */
export const MAX_COMMIT_BYTES = 64 * 1024 * 1024;

/*
 * Strings PostgreSQL puts into a btree index (storage-postgres's schema):
 * document kinds and keys, task kinds and submission request ids, each
 * stored as its JSON text (`exactText`), next to the session key (raw text,
 * at most 1000 UTF-8 bytes there). A btree index row may hold at most 2704
 * bytes (PostgreSQL error 54000, "index row size ... exceeds btree version
 * 4 maximum 2704"), and an over-long row fails the commit, so these strings
 * are bounded where they enter a transaction, on every backend.
 *
 * The widest row, in `documents_by_address (session_key, kind, scope,
 * key_json, created_at)`, at most (no compression assumed; a text value
 * over 126 bytes has a 4-byte length header and is 4-byte aligned, up to 3
 * bytes of padding; a bigint is 8-byte aligned, up to 7):
 *
 *     8            index tuple header (item pointer + info)
 *   + 4 + 1000 + 3 session_key
 *   + 4 + 256 + 3  kind (MAX_KIND_BYTES of JSON text)
 *   + 1 + 18       scope (`c:` or `t:` and a safe integer: 1-byte header)
 *   + 4 + 1024 + 3 key_json (MAX_KEY_BYTES of JSON text)
 *   + 8 + 7        created_at
 *   = 2343, 2344 aligned to 8: 360 bytes under 2704.
 *
 * The others are narrower: `submissions_by_request (session_key,
 * conversation_id, request_json, id)` at most 8 + 1007 + 15 + 1031 + 15 =
 * 2076; `documents_live_address` 2328; `tasks_by_kind (session_key, kind,
 * id)` 1293; `sessions_pkey` 1012. Statuses are indexed too, but are a
 * few fixed words; entry kinds and record columns are not indexed. Checked
 * on PostgreSQL 15 with incompressible text: a 1000-byte session key, a
 * 256-byte kind and a 1500-byte key_json make a 2792-byte row, as counted
 * here, and are refused; at 1024 the row is 2316 bytes.
 */

/** The longest document or task kind, in bytes of its JSON text (UTF-8, quotes and escapes included). */
export const MAX_KIND_BYTES = 256;

/** The longest document key or submission `requestId`, in bytes of its JSON text (UTF-8, quotes and escapes included). */
export const MAX_KEY_BYTES = 1024;

/** The most bytes one UTF-16 unit of a string takes in JSON text (`\u0001`, a lone surrogate escaped). */
const MAX_UNIT_BYTES = 6;
/** The longest JSON text of a finite number (`-1.2345678901234567e-308`). */
export const MAX_NUMBER_BYTES = 24;

/** An upper bound of a string's JSON text: six bytes per unit plus the quotes. */
export function stringBound(text: string): number {
  return text.length * MAX_UNIT_BYTES + 2;
}

/**
 * An upper bound of a value's JSON text, without building it: cheap to
 * compute, exact enough to tell most values are far within a limit. The
 * value is strict JSON (already checked and copied).
 */
export function jsonBound(value: Json): number {
  if (typeof value === "string") return stringBound(value);
  if (typeof value !== "object" || value === null) return MAX_NUMBER_BYTES;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) bytes += jsonBound(value[i] as Json) + 1;
    return bytes;
  }
  for (const key of Object.keys(value))
    bytes += stringBound(key) + 2 + jsonBound(value[key] as Json);
  return bytes;
}

/** Characters JSON text writes as one byte each, unescaped. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The exact UTF-8 length of a string's JSON text, quotes included. */
export function stringBytes(text: string): number {
  if (PLAIN.test(text)) return text.length + 2;
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20)
      bytes += unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6;
    else if (unit === 0x22 || unit === 0x5c) bytes += 2;
    else if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4; // a pair: one four-byte character
        i++;
      } else bytes += 6; // a lone surrogate: escaped
    } else if (unit >= 0xdc00 && unit <= 0xdfff) bytes += 6;
    else bytes += 3;
  }
  return bytes;
}

/**
 * The exact UTF-8 length of `JSON.stringify(value)`, computed without
 * building the text (which may be longer than a JavaScript string can be).
 */
export function jsonBytes(value: Json): number {
  switch (typeof value) {
    case "string":
      return stringBytes(value);
    case "number":
      return String(value).length;
    case "boolean":
      return value ? 4 : 5;
    default:
      break;
  }
  if (value === null) return 4;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) bytes += jsonBytes(value[i] as Json);
    return bytes + Math.max(0, value.length - 1);
  }
  const keys = Object.keys(value);
  for (const key of keys) bytes += stringBytes(key) + 1 + jsonBytes(value[key] as Json);
  return bytes + Math.max(0, keys.length - 1);
}

/**
 * The size to count for a value whose bound is `bound`: the bound itself
 * when it is within `limit` (the common case: nothing more is computed),
 * else the exact size, which must be within `limit` too. Throws a
 * `TypeError` naming `where` and both sizes when it is not.
 */
export function checkedSize(value: Json, bound: number, limit: number, where: string): number {
  if (bound <= limit) return bound;
  const exact = jsonBytes(value);
  if (exact > limit)
    throw new ValueTooLarge(
      `${where}: ${exact} bytes of JSON text, over the limit of ${limit} bytes per value`,
      where,
      exact,
      limit,
    );
  return exact;
}

/**
 * Throws a `TypeError` naming `where` and both sizes when the JSON text of
 * `text` is longer than `limit` bytes (a kind, a key, a request id). The
 * exact size is computed only for a string whose bound is over the limit.
 */
export function checkTextBytes(text: string, limit: number, where: string): void {
  if (stringBound(text) <= limit) return;
  const exact = stringBytes(text);
  if (exact > limit)
    throw new ValueTooLarge(
      `${where}: ${exact} bytes of JSON text, over the limit of ${limit} bytes`,
      where,
      exact,
      limit,
    );
}
