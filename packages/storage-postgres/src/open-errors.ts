import { DurablyError, StorageIOError, type CorruptionLocation } from "@durably/core";
import pg from "pg";
import type { Pool, PoolConfig } from "pg";
import { UnsupportedDatabase } from "./server-checks.js";

/** What names a server in messages: where it is and which database, never the password. */
export interface ServerFields {
  host?: string | undefined;
  port?: number | undefined;
  database?: string | undefined;
}

/** `host:port/database` of a connected client (or of anything carrying those fields). */
export function serverOf(fields: ServerFields): string {
  const host = fields.host ?? "localhost";
  const where = host.startsWith("/") ? `${host} (socket)` : host;
  return `${where}:${fields.port ?? 5432}/${fields.database ?? "?"}`;
}

/**
 * `host:port/database` a pool or connection settings would connect to,
 * resolved as node-postgres resolves them (connection string, then the
 * `PG*` environment, then its defaults) by building a client that never
 * connects.
 */
export function serverOfConfig(config: PoolConfig | Pool | undefined): string {
  try {
    const settings = config instanceof pg.Pool ? config.options : config;
    return serverOf(new pg.Client(settings ?? {}));
  } catch {
    return "the PostgreSQL server";
  }
}

/** SQLSTATE `insufficient_privilege`. */
export const INSUFFICIENT_PRIVILEGE = "42501";

/** Errors that already say what is wrong in Durably's (or JavaScript's) terms, passed on as they are. */
export function isTyped(error: unknown): boolean {
  return (
    error instanceof DurablyError ||
    error instanceof UnsupportedDatabase ||
    error instanceof TypeError ||
    error instanceof RangeError
  );
}

/** The driver's message with its code: `connect ECONNREFUSED 127.0.0.1:1 [ECONNREFUSED]`. */
export function detail(error: unknown): string {
  // A name with several addresses (localhost: ::1 and 127.0.0.1) fails as an AggregateError with
  // no message of its own: each attempt's says where.
  const message =
    error instanceof AggregateError && error.message === "" && error.errors.length > 0
      ? error.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join("; ")
      : error instanceof Error
        ? error.message
        : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.length > 0 ? `${message} [${code}]` : message;
}

/**
 * A driver error while opening, reading or closing (no connection, an
 * unknown database, a refused login, a terminated backend, a missing
 * right) as the typed `StorageIOError` naming the server and what was
 * being done, with the driver's error as `cause`. Durably's own errors and
 * option errors pass through unchanged.
 */
export function ioFailure(
  error: unknown,
  server: string,
  doing: string,
  location: CorruptionLocation = {},
  hint = "",
): unknown {
  if (isTyped(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const rights =
    code === INSUFFICIENT_PRIVILEGE
      ? "; the role lacks a right it needs (the README of @durably/storage-postgres, Install, lists them)"
      : "";
  return new StorageIOError(
    `PostgreSQL ${server}: ${doing} failed: ${detail(error)}${rights}${hint}`,
    location,
    { cause: error },
  );
}
