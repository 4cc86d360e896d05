import { StorageCorrupted, StorageVersionError } from "@durably/core";
import type { PoolClient } from "pg";
import { commitCallsFunction, commitCallsFunctionV3, fenceRoundFunction } from "./commit-calls.js";
import { ioFailure, serverOf } from "./open-errors.js";
import {
  checkCurrent,
  checkKeyword,
  checkMigrationRights,
  checkMigrationsTable,
  checkNoForeignObjects,
  checkVersionReadable,
  readCatalog,
  type Catalog,
} from "./schema-check.js";

/**
 * The schema as an append-only list of migrations, each run once per
 * database. Every table leads with `session_key`, so one database holds
 * many sessions and every lookup stays inside one session's index range.
 * Lookup columns holding user strings (`kind`, `key_json`, `request_json`)
 * store their JSON encoding (see `exactText`). Never edit a shipped
 * migration: add a new one.
 */
export function migrations(s: string): readonly { version: number; sql: string }[] {
  return [
    {
      version: 1,
      sql: `
        CREATE TABLE ${s}.sessions (
          session_key text PRIMARY KEY,
          next_seq bigint NOT NULL,
          high_water bigint NOT NULL,
          lease_owner text,
          lease_token bigint NOT NULL,
          lease_locked boolean NOT NULL DEFAULT false,
          lease_expires_at timestamptz NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE ${s}.conversations (
          session_key text NOT NULL,
          id bigint NOT NULL,
          owner_task_id bigint,
          record text NOT NULL,
          PRIMARY KEY (session_key, id)
        );
        CREATE INDEX conversations_by_owner ON ${s}.conversations (session_key, owner_task_id, id) WHERE owner_task_id IS NOT NULL;
        CREATE TABLE ${s}.entries (
          session_key text NOT NULL,
          id bigint NOT NULL,
          conversation_id bigint NOT NULL,
          commit_seq bigint NOT NULL,
          is_head boolean NOT NULL,
          record text NOT NULL,
          PRIMARY KEY (session_key, id)
        );
        CREATE INDEX entries_by_conversation ON ${s}.entries (session_key, conversation_id, id);
        CREATE INDEX entries_heads ON ${s}.entries (session_key, conversation_id, id) WHERE is_head;
        CREATE TABLE ${s}.tasks (
          session_key text NOT NULL,
          id bigint NOT NULL,
          conversation_id bigint NOT NULL,
          kind text NOT NULL,
          status text NOT NULL,
          abort_requested boolean NOT NULL,
          background boolean NOT NULL,
          owner bigint,
          record text NOT NULL,
          PRIMARY KEY (session_key, id)
        );
        CREATE INDEX tasks_by_conversation ON ${s}.tasks (session_key, conversation_id, id);
        CREATE INDEX tasks_by_kind ON ${s}.tasks (session_key, kind, id);
        CREATE INDEX tasks_by_status ON ${s}.tasks (session_key, status, id);
        CREATE INDEX tasks_by_owner ON ${s}.tasks (session_key, owner, id) WHERE owner IS NOT NULL;
        CREATE INDEX tasks_by_abort_requested ON ${s}.tasks (session_key, abort_requested, id);
        CREATE INDEX tasks_by_background ON ${s}.tasks (session_key, background, id);
        CREATE TABLE ${s}.submissions (
          session_key text NOT NULL,
          id bigint NOT NULL,
          conversation_id bigint NOT NULL,
          status text NOT NULL,
          request_json text,
          record text NOT NULL,
          PRIMARY KEY (session_key, id)
        );
        CREATE INDEX submissions_by_conversation ON ${s}.submissions (session_key, conversation_id, id);
        CREATE INDEX submissions_by_status ON ${s}.submissions (session_key, conversation_id, status, id);
        CREATE INDEX submissions_by_request ON ${s}.submissions (session_key, conversation_id, request_json, id) WHERE request_json IS NOT NULL;
        CREATE TABLE ${s}.documents (
          session_key text NOT NULL,
          id bigint NOT NULL,
          kind text NOT NULL,
          key_json text NOT NULL,
          scope text NOT NULL,
          rewindable boolean NOT NULL,
          created_at bigint NOT NULL,
          retired_at bigint,
          version bigint NOT NULL,
          base_seq bigint NOT NULL,
          record text NOT NULL,
          PRIMARY KEY (session_key, id)
        );
        CREATE INDEX documents_by_address ON ${s}.documents (session_key, kind, scope, key_json, created_at);
        CREATE UNIQUE INDEX documents_live_address ON ${s}.documents (session_key, kind, scope, key_json) WHERE retired_at IS NULL;
        CREATE INDEX documents_by_scope ON ${s}.documents (session_key, scope, id);
        CREATE INDEX documents_by_scope_kind ON ${s}.documents (session_key, scope, kind, id);
        CREATE INDEX documents_live_by_scope ON ${s}.documents (session_key, scope, id) WHERE retired_at IS NULL;
        CREATE INDEX documents_live_by_scope_kind ON ${s}.documents (session_key, scope, kind, id) WHERE retired_at IS NULL;
        CREATE TABLE ${s}.document_revisions (
          session_key text NOT NULL,
          document_id bigint NOT NULL,
          seq bigint NOT NULL,
          kind text NOT NULL CHECK (kind IN ('base', 'delta')),
          content text NOT NULL,
          version bigint NOT NULL,
          PRIMARY KEY (session_key, document_id, seq)
        );
        -- Fencing: every commit transaction calls this first. It locks the
        -- session's row (a takeover waits for the commit, or the commit sees
        -- the new token) and raises unless the caller still holds the lease.
        CREATE FUNCTION ${s}.fence(p_session text, p_token bigint) RETURNS void
        LANGUAGE plpgsql AS $fence$
        DECLARE
          held record;
        BEGIN
          SELECT lease_owner, lease_token INTO held FROM ${s}.sessions WHERE session_key = p_session FOR UPDATE;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'durably session % does not exist', p_session USING ERRCODE = 'DU001';
          END IF;
          IF held.lease_token <> p_token OR held.lease_owner IS NULL THEN
            RAISE EXCEPTION 'durably session %: lease token % no longer holds it (now token %, owner %)',
              p_session, p_token, held.lease_token, coalesce(held.lease_owner, 'none')
              USING ERRCODE = 'DU001';
          END IF;
        END
        $fence$;
      `,
    },
    {
      version: 2,
      // The host whose liveness lock vouches for the lease: many sessions share one lock
      // (openPostgresHost), so a takeover probes the holder host's lock, not a per-session one.
      // NULL for a lease taken by a release before hosts, which held a per-session lock.
      sql: `ALTER TABLE ${s}.sessions ADD COLUMN lease_host text;`,
    },
    {
      version: 3,
      // A round's calls as one statement with bound parameters (commit-calls.ts).
      sql: commitCallsFunctionV3(s),
    },
    {
      version: 4,
      // A round fences its sessions and stores their counters in one statement (fence_round), one
      // row change per session, instead of a fence and a counters update per session; commit_calls
      // uses it (the same argument, the same changes).
      sql: fenceRoundFunction(s) + commitCallsFunction(s),
    },
  ];
}

/** Advisory lock key (session level) serialising migrations across servers starting at once. */
const MIGRATION_LOCK = "durably:migrations";

/**
 * Brings the schema to the latest version. An open of a schema already at
 * it runs no DDL at all: it reads the catalog (one query: the schema, its
 * tables' columns and functions, and the role's rights on them) and the
 * version, checks them, and goes on, so a role with only read and write
 * rights opens it. Otherwise the migrations run in one transaction,
 * holding a transaction-level advisory lock so two servers starting
 * together neither race nor half-apply: the second waits, then finds the
 * work done. Every refusal changes nothing: a database migrated by a newer
 * release (`StorageVersionError`), a schema holding tables Durably did not
 * create or missing some it did (`StorageCorrupted`), a role lacking a
 * right (`StorageIOError` naming it), and a driver error (`StorageIOError`
 * naming the server) are raised before any DDL or rolled back with it.
 */
export async function migrate(
  client: PoolClient,
  schema: string,
): Promise<{ from: number; to: number }> {
  const server = serverOf(client);
  const latest = migrations(schema).at(-1)?.version ?? 0;
  let doing = `reading the catalog of schema ${schema}`;
  try {
    const found = await inspect(client, schema, server);
    if (found.version === latest) {
      checkCurrent(found.catalog, latest);
      return { from: latest, to: latest };
    }
    refuseNewer(schema, found.version, latest);
    checkMigratable(found.catalog, found.version, latest);
  } catch (error) {
    throw ioFailure(error, server, doing);
  }
  await client.query("BEGIN").catch((error: unknown) => {
    throw ioFailure(error, server, `migrating schema ${schema}`);
  });
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
      `${MIGRATION_LOCK}:${schema}`,
    ]);
    // Another server may have migrated while this one waited for the lock.
    const found = await inspect(client, schema, server);
    const from = found.version;
    refuseNewer(schema, from, latest);
    if (from < latest) {
      checkMigratable(found.catalog, from, latest);
      doing = `migrating schema ${schema} from version ${from} to ${latest} (rolled back: nothing was changed)`;
      if (!found.catalog.schemaExists) await client.query(`CREATE SCHEMA ${schema}`);
      if (!found.catalog.relations.has("migrations"))
        await client.query(
          `CREATE TABLE ${schema}.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
        );
      for (const migration of migrations(schema)) {
        if (migration.version <= from) continue;
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${schema}.migrations (version) VALUES ($1)`, [
          migration.version,
        ]);
      }
      doing = `checking schema ${schema} after migrating it (rolled back: nothing was changed)`;
    }
    checkCurrent(await readCatalog(client, schema, server), latest);
    await client.query("COMMIT");
    return { from, to: latest };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw foreignObject(error, server, schema) ?? ioFailure(error, server, doing);
  }
}

/** The catalog, checked for a foreign `migrations` table, and the version its rows record (0 for none). */
async function inspect(
  client: PoolClient,
  schema: string,
  server: string,
): Promise<{ catalog: Catalog; version: number }> {
  const catalog = await readCatalog(client, schema, server);
  checkKeyword(catalog);
  if (!checkMigrationsTable(catalog)) return { catalog, version: 0 };
  checkVersionReadable(catalog);
  const found = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.migrations`,
  );
  return { catalog, version: found.rows[0]?.version ?? 0 };
}

function refuseNewer(schema: string, from: number, latest: number): void {
  if (from > latest)
    throw new StorageVersionError(
      `schema ${schema} has version ${from}; this @durably/storage-postgres understands versions up to ${latest}. Upgrade the package to open it.`,
    );
}

function checkMigratable(catalog: Catalog, from: number, latest: number): void {
  if (from === 0) checkNoForeignObjects(catalog);
  checkMigrationRights(catalog, from, latest);
}

/** SQLSTATEs of a CREATE meeting an object of the same name (relation, function, other object). */
const DUPLICATES = new Set(["42P07", "42723", "42710"]);

/** A migration's CREATE met an object Durably did not create (one the checks before it could not see). */
function foreignObject(error: unknown, server: string, schema: string): Error | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !DUPLICATES.has(code)) return undefined;
  return new StorageCorrupted(
    `PostgreSQL ${server}: schema ${schema}: ${error instanceof Error ? error.message : String(error)}: the schema holds an object Durably did not create; nothing was changed (the migration was rolled back). Open with another schema (option schema), or move it away`,
    {},
    { cause: error },
  );
}
