import { StorageCorrupted, StorageIOError, type CorruptionLocation } from "@durably/core";
import { isIoError, isNotDatabaseError } from "./sqlite-database.js";

/** Where a failing statement was reading or writing, as far as the caller knows. */
export interface Place {
  table?: string;
  key?: string | number;
}

/**
 * Turns a driver error that means damage (`SQLITE_CORRUPT`, `SQLITE_NOTADB`)
 * into `StorageCorrupted`, and one that means the disk failed
 * (`SQLITE_IOERR*`, `SQLITE_FULL`) into `StorageIOError`, naming the file
 * and, where the caller knows them, the table and key. The driver's error
 * stays attached as `cause`. Anything else is returned unchanged.
 */
export function typedDriverError(
  error: unknown,
  file: string,
  action: string,
  place: Place = {},
): Error {
  if (error instanceof StorageCorrupted || error instanceof StorageIOError) return error;
  const location: CorruptionLocation = {
    file,
    ...(place.table !== undefined ? { table: place.table } : {}),
    ...(place.key !== undefined ? { key: String(place.key) } : {}),
  };
  const where = [
    file,
    place.table !== undefined ? `table ${place.table}` : undefined,
    place.key !== undefined ? `key ${place.key}` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(", ");
  const detail = error instanceof Error ? error.message : String(error);
  if (isNotDatabaseError(error))
    return new StorageCorrupted(
      `${where}: SQLite found the file damaged while ${action} (${detail})`,
      location,
      { cause: error },
    );
  if (isIoError(error))
    return new StorageIOError(`${where}: I/O failed while ${action} (${detail})`, location, {
      cause: error,
    });
  return error instanceof Error ? error : new Error(detail);
}

/** Runs a read or write, turning the driver's damage and I/O errors into typed ones naming the place. */
export async function guarded<T>(
  file: string,
  action: string,
  place: Place,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw typedDriverError(error, file, action, place);
  }
}
