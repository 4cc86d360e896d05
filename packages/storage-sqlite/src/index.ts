export { openSqliteStorage, type OpenSqliteStorageOptions } from "./open.js";
export {
  SqliteStorage,
  type SqliteStorageSettings,
  type SynchronousMode,
} from "./sqlite-storage.js";
export type { OpenCheck } from "./open-check.js";
export { BetterSqlite3Database } from "./better-sqlite3-database.js";
export {
  isBusyError,
  isIoError,
  isNotDatabaseError,
  type RunResult,
  type SqliteDatabase,
  type SqliteStatements,
  type SqlParams,
  type SqlValue,
  type TransactionOptions,
} from "./sqlite-database.js";
export { SCHEMA_VERSION } from "./schema.js";
export { ENTRY_ROWS_SQL, REVISION_ROWS_SQL } from "./inspect.js";
