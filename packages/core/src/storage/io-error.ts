import { DurablyError, type CorruptionLocation } from "../domain/errors.js";

/**
 * The storage's files could not be read or written (EIO, a full disk, a
 * failed fsync): the operation did not complete. It carries the place
 * (file, table, key where known) and the underlying error as `cause`.
 * Unlike `StorageCorrupted`, the stored data is not known to be damaged.
 */
export class StorageIOError extends DurablyError {
  override readonly name = "StorageIOError";
  readonly code = "STORAGE_IO";
  readonly location: CorruptionLocation;
  constructor(message: string, location: CorruptionLocation = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.location = location;
  }
}
