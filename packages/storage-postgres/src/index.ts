export { openPostgresStorage, type OpenPostgresStorageOptions } from "./open.js";
export { PostgresStorage, type PostgresStorageSettings } from "./postgres-storage.js";
export { ID_RESERVATION } from "./commit-writer.js";
