import { crc32 } from "node:zlib";
import { StorageCorrupted, type CorruptionLocation } from "@durably/core";
import type { SqlValue } from "./sqlite-database.js";

/**
 * Row checksums. Every row that holds a value carries `crc`: the CRC-32
 * (zlib's polynomial) of the UTF-8 text of its content column (a record's
 * JSON, a revision's content), then a newline, then the row's other checked
 * columns written as JSON values separated by commas. A flipped byte
 * anywhere in the row (the JSON, a key, a seq, a status) no longer matches,
 * so reading it fails with `StorageCorrupted` instead of returning
 * different data.
 *
 * The content part is computed once when a write is planned (outside the
 * transaction) and continued over the small column text inside it, so the
 * seq a row gets at commit time costs one short CRC.
 */

/** CRC-32 of a row's content column alone: the first half of its checksum. */
export function contentCrc(content: string): number {
  return crc32(content);
}

/** Finishes a row checksum from its content CRC and its other checked columns. */
export function rowCrc(content: number, columns: readonly SqlValue[]): number {
  return crc32(columnText(columns), content);
}

/** The checksum of a row without a content column (counters): its columns alone. */
export function columnsCrc(columns: readonly SqlValue[]): number {
  return crc32(columnText(columns), 0);
}

/** `\n` then the columns as JSON values, comma separated (integers, `null`, quoted strings). */
function columnText(columns: readonly SqlValue[]): string {
  let text = "\n";
  for (let i = 0; i < columns.length; i++) {
    const value = columns[i] as SqlValue;
    if (i > 0) text += ",";
    text += typeof value === "string" ? JSON.stringify(value) : String(value);
  }
  return text;
}

/**
 * Checks a row read back against its stored checksum. `where` names the row
 * (`entries id 42`), `location` carries the table and key for callers.
 */
export function verifyRow(
  where: string,
  location: CorruptionLocation,
  stored: unknown,
  content: string,
  columns: readonly SqlValue[],
): void {
  if (typeof content !== "string" || rowCrc(crc32(content), columns) !== stored)
    throw checksumMismatch(where, location, stored);
}

/** Same as `verifyRow` for a row without a content column. */
export function verifyColumns(
  where: string,
  location: CorruptionLocation,
  stored: unknown,
  columns: readonly SqlValue[],
): void {
  if (columnsCrc(columns) !== stored) throw checksumMismatch(where, location, stored);
}

function checksumMismatch(
  where: string,
  location: CorruptionLocation,
  stored: unknown,
): StorageCorrupted {
  const what =
    typeof stored === "number" ? "does not match its stored checksum" : "has no valid checksum";
  return new StorageCorrupted(
    `${where}: the row ${what}: it was changed after it was written (a flipped byte, a torn page or an edit by hand)`,
    location,
  );
}
