import {
  DurablyError,
  StorageCorrupted,
  StorageLocked,
  StoragePoisoned,
  type CorruptionLocation,
} from "@durably/core";

/**
 * Typed errors for what abstract-level databases raise. Their codes
 * (`LEVEL_CORRUPTION`, `LEVEL_IO_ERROR`, `LEVEL_LOCKED`, found on the error
 * or on its `cause`, since `open` wraps them in `LEVEL_DATABASE_NOT_OPEN`)
 * become Durably errors naming the database and the key or range, with the
 * original attached as `cause`.
 */

/** Where an operation ran: the database location, and the key or key range it touched. */
export interface Place {
  location: string | undefined;
  key?: string;
  range?: string;
}

export function levelCode(error: unknown): string | undefined {
  const codes = new Set<string>();
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.add(code);
    e = (e as { cause?: unknown }).cause;
  }
  for (const code of ["LEVEL_LOCKED", "LEVEL_CORRUPTION", "LEVEL_IO_ERROR"])
    if (codes.has(code)) return code;
  return undefined;
}

function describe(place: Place): string {
  const where = place.location ?? "the database";
  if (place.key !== undefined) return `${where}, key ${place.key}`;
  if (place.range !== undefined) return `${where}, ${place.range}`;
  return where;
}

function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    message = e.message;
    e = e.cause;
  }
  return message;
}

/**
 * The failure of an I/O operation on the database. The core has no I/O
 * error class, so this is `StoragePoisoned`: the outcome of what was running
 * is unknown and the storage stops until it is reopened (StoreStorage
 * poisons itself when it sees one).
 */
export function ioFailure(message: string, cause: unknown): DurablyError {
  return new StoragePoisoned(message, { cause });
}

/** `error` as a Durably error when its code says what it is; otherwise `error` unchanged. */
export function translate(error: unknown, operation: string, place: Place): unknown {
  if (error instanceof DurablyError) return error;
  const code = levelCode(error);
  const where = describe(place);
  const detail = innermostMessage(error);
  if (code === "LEVEL_CORRUPTION") {
    const location: CorruptionLocation =
      place.key !== undefined
        ? { key: place.key, ...(place.location ? { file: place.location } : {}) }
        : place.location !== undefined
          ? { file: place.location }
          : {};
    return new StorageCorrupted(
      `${where}: the database reports corruption during ${operation}: ${detail}`,
      location,
      { cause: error },
    );
  }
  if (code === "LEVEL_IO_ERROR")
    return ioFailure(`${where}: I/O error during ${operation}: ${detail}`, error);
  if (code === "LEVEL_LOCKED")
    return new StorageLocked(
      `${place.location ?? "the database"} is locked: another process (or instance) has it open`,
      { cause: error },
    );
  return error;
}
