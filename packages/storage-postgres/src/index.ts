export { openPostgresStorage, type OpenPostgresStorageOptions } from "./open.js";
export {
  openPostgresHost,
  PostgresHost,
  type OpenPostgresHostOptions,
  type PostgresHostStats,
} from "./host.js";
export { PostgresStorage } from "./postgres-storage.js";
export { UnsupportedDatabase } from "./server-checks.js";
export { ID_RESERVATION } from "./commit-writer.js";
