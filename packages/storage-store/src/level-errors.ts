import {
  DurablyError,
  StorageCorrupted,
  StorageIOError,
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

/**
 * What kind of operation failed. An I/O error while opening, reading or
 * closing is `StorageIOError`: nothing was changed, and the storage stays
 * usable for reads. One during a write is `StoragePoisoned`: the write may
 * or may not have landed.
 */
export type OperationKind = "open" | "read" | "write" | "close";

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
 * The file LevelDB names in its message (`IO error: <location>/000012.log:
 * Input/output error`), when it is inside the database; else the database
 * directory itself.
 */
function fileOf(detail: string, location: string | undefined): string | undefined {
  if (location === undefined) return undefined;
  const dir = location.replace(/[/\\]+$/, "");
  const at = detail.indexOf(`${dir}/`);
  if (at < 0) return location;
  const rest = detail.slice(at);
  const end = rest.search(/: /);
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * An I/O failure while opening, reading or closing: `StorageIOError` naming
 * the place (`location.file`, and `location.key` for a read of one key).
 */
export function ioError(
  message: string,
  cause: unknown,
  location: CorruptionLocation = {},
): StorageIOError {
  return new StorageIOError(message, location, { cause });
}

/** `error` as a Durably error when its code says what it is; otherwise `error` unchanged. */
export function translate(
  error: unknown,
  operation: string,
  place: Place,
  kind: OperationKind,
): unknown {
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
  if (code === "LEVEL_IO_ERROR") {
    const message = `${where}: I/O error during ${operation}: ${detail}`;
    // The write may have reached the disk or not: nothing the storage holds in memory can be trusted.
    if (kind === "write") return new StoragePoisoned(message, { cause: error });
    const file = fileOf(detail, place.location);
    return ioError(message, error, {
      ...(file !== undefined ? { file } : {}),
      ...(place.key !== undefined ? { key: place.key } : {}),
    });
  }
  if (code === "LEVEL_LOCKED")
    return new StorageLocked(
      `${place.location ?? "the database"} is locked: another process (or instance) has it open`,
      { cause: error },
    );
  return error;
}
