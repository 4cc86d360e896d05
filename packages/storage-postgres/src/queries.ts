import { StorageCorrupted } from "@durably/core";
import pg from "pg";
import type { Pool, PoolClient, QueryResult, QueryResultRow } from "pg";

/**
 * Ids and seqs are `bigint` columns, which node-postgres returns as strings.
 * These parsers are passed per query (never set globally, so the user's own
 * queries on a shared pool are untouched) and turn them into numbers, refusing
 * any value beyond JavaScript's safe integers rather than rounding it.
 */
export const INT8_OID = 20;
const TYPES = new pg.TypeOverrides();
TYPES.setTypeParser(INT8_OID, parseBigint);

/**
 * A bigint the parser refused. The parser cannot know the column or row, so
 * a reader that can run its statement again names them (bigint-range.ts);
 * anywhere else it is reported as it is, still `StorageCorrupted`.
 */
export class UnsafeBigint extends StorageCorrupted {
  constructor(readonly text: string) {
    super(`a bigint column holds ${text}, beyond the safe integer range`);
  }
}

/** Whether a bigint's text is a safe integer. Up to 15 characters always is, so the hot path skips the range check. */
export function isSafeBigintText(text: string): boolean {
  return text.length < 16 || Number.isSafeInteger(Number(text));
}

function parseBigint(text: string): number {
  if (!isSafeBigintText(text)) throw new UnsafeBigint(text);
  return Number(text);
}

export type Runner = Pool | PoolClient;

export function query<R extends QueryResultRow>(
  runner: Runner,
  text: string,
  values?: readonly unknown[],
): Promise<QueryResult<R>> {
  return runner.query<R>({ text, values: values as unknown[] | undefined, types: TYPES });
}

/** SQLSTATE of a unique violation, the only error a commit script turns into a refusal. */
export const UNIQUE_VIOLATION = "23505";
/** SQLSTATE raised by the `fence` function when the lease was taken over. */
export const FENCED = "DU001";

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

export function constraintOf(error: unknown): string | undefined {
  const constraint = (error as { constraint?: unknown } | null)?.constraint;
  return typeof constraint === "string" ? constraint : undefined;
}

/** SQLSTATE classes after which the connection, or the server, cannot be trusted to go on. */
const CONNECTION_CLASSES = new Set(["08", "53", "57", "58", "XX"]);

/**
 * A statement's own failure reported by the server (a unique violation, a
 * fence, bad data): its transaction is aborted and nothing of it committed,
 * and the connection can go on (to roll back to a savepoint). A network
 * error, a terminated backend or a server fault is none of these.
 */
export function isStatementError(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return false;
  const code = error.code ?? "";
  return code.length === 5 && !CONNECTION_CLASSES.has(code.slice(0, 2));
}
