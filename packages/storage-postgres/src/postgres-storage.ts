import { CheckedStorage } from "@durably/core/storage";
import type { Pool } from "pg";
import { acquireLease, type LeaseSettings } from "./lease.js";
import { PostgresBackend, type PostgresStorageSettings } from "./postgres-backend.js";
import { migrate } from "./schema.js";

export type { PostgresStorageSettings };

/**
 * The Storage contract on PostgreSQL for one session of a shared database:
 * core's checked front over `PostgresBackend`. Open it with
 * `openPostgresStorage`.
 */
export class PostgresStorage extends CheckedStorage {
  readonly session: string;
  readonly schema: string;

  private constructor(backend: PostgresBackend, settings: PostgresStorageSettings) {
    super(backend);
    this.session = settings.session;
    this.schema = settings.schema;
  }

  /**
   * Takes one connection from `pool` for the storage's writes, migrates the
   * schema (serialised across servers by an advisory lock), and takes the
   * session's lease. Fails with `StorageLocked` while another owner's lease
   * is live and its connection alive; changes nothing then.
   */
  static async open(pool: Pool, settings: PostgresStorageSettings): Promise<PostgresStorage> {
    const client = await pool.connect();
    let failure: Error | undefined;
    // A checked-out connection reports its death as an event; without a listener it would crash the process.
    const onError = (error: Error) => (failure = error);
    client.on("error", onError);
    try {
      await client.query("SELECT set_config('application_name', $1, false)", [
        `durably ${settings.session}`.slice(0, 63),
      ]);
      await migrate(client, settings.schema);
      const leaseSettings: LeaseSettings = settings;
      const lease = await acquireLease(client, leaseSettings);
      if (failure !== undefined) throw failure;
      client.off("error", onError);
      return new PostgresStorage(new PostgresBackend(pool, client, settings, lease), settings);
    } catch (error) {
      // Destroying the connection also drops any advisory lock it took.
      client.release(true);
      if (settings.ownsPool) await pool.end().catch(() => undefined);
      throw error;
    }
  }
}
