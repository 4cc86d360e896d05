import { CheckedStorage } from "@durably/core/storage";
import type { HostSessionBackend } from "./host-session.js";

/**
 * The Storage contract on PostgreSQL for one session of a shared database:
 * core's checked front over the session's backend. Open it with
 * `openPostgresStorage`, or with `PostgresHost.open` to share connections.
 */
export class PostgresStorage extends CheckedStorage {
  readonly session: string;
  readonly schema: string;

  /** @internal Opened by a host. */
  constructor(backend: HostSessionBackend, schema: string) {
    super(backend);
    this.session = backend.sessionKey;
    this.schema = schema;
  }
}
