import { StorageCorrupted, StorageIOError } from "@durably/core";
import type { PoolClient } from "pg";

/**
 * The tables of the latest schema version with their columns, and its
 * functions: what an open at the latest version checks is there (a test
 * compares them with what the migrations create). `migrations` is read
 * only; the others are read and written.
 */
export const TABLES: Readonly<Record<string, readonly string[]>> = {
  migrations: ["version", "applied_at"],
  sessions: [
    "session_key",
    "next_seq",
    "high_water",
    "lease_owner",
    "lease_token",
    "lease_locked",
    "lease_expires_at",
    "created_at",
    "lease_host",
  ],
  conversations: ["session_key", "id", "owner_task_id", "record"],
  entries: ["session_key", "id", "conversation_id", "commit_seq", "is_head", "record"],
  tasks: [
    "session_key",
    "id",
    "conversation_id",
    "kind",
    "status",
    "abort_requested",
    "background",
    "owner",
    "record",
  ],
  submissions: ["session_key", "id", "conversation_id", "status", "request_json", "record"],
  documents: [
    "session_key",
    "id",
    "kind",
    "key_json",
    "scope",
    "rewindable",
    "created_at",
    "retired_at",
    "version",
    "base_seq",
    "record",
  ],
  document_revisions: ["session_key", "document_id", "seq", "kind", "content", "version"],
};
export const FUNCTIONS: readonly string[] = ["fence", "commit_calls", "fence_round"];

/** The rights a role needs on each data table (on `migrations`, SELECT). */
const TABLE_RIGHTS = ["SELECT", "INSERT", "UPDATE", "DELETE"] as const;

interface RelationRow {
  name: string;
  kind: string;
  columns: string[] | null;
  /** SELECT, INSERT, UPDATE, DELETE; null for an index or sequence. */
  rights: boolean[] | null;
}

/** What the server says about the role, the database and the schema, read from its catalog only. */
export interface Catalog {
  readonly server: string;
  readonly schema: string;
  readonly role: string;
  readonly database: string;
  readonly databaseCreate: boolean;
  readonly schemaExists: boolean;
  readonly schemaUsage: boolean;
  readonly schemaCreate: boolean;
  /** `pg_get_keywords().catcode` of the schema name, when it is a keyword. */
  readonly keyword: string | null;
  readonly relations: ReadonlyMap<string, RelationRow>;
  /** Function name → whether the role may execute it (every overload). */
  readonly functions: ReadonlyMap<string, boolean>;
}

/**
 * One catalog query: works with no right on the schema (the catalog is
 * readable by every role), writes nothing and takes no lock beyond the
 * catalog's own.
 */
const CATALOG_SQL = `
SELECT current_user AS role, current_database() AS database,
  has_database_privilege(current_database(), 'CREATE') AS database_create,
  n.oid IS NOT NULL AS schema_exists,
  coalesce(has_schema_privilege(n.oid, 'USAGE'), false) AS schema_usage,
  coalesce(has_schema_privilege(n.oid, 'CREATE'), false) AS schema_create,
  (SELECT k.catcode::text FROM pg_get_keywords() k WHERE k.word = $1) AS keyword,
  (SELECT coalesce(json_agg(json_build_object(
      'name', c.relname,
      'kind', c.relkind,
      'columns', CASE WHEN c.relkind IN ('r', 'p', 'v', 'm', 'f') THEN
        (SELECT coalesce(json_agg(a.attname ORDER BY a.attnum), '[]'::json) FROM pg_attribute a
          WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) END,
      'rights', CASE WHEN c.relkind IN ('r', 'p', 'v', 'm', 'f') THEN json_build_array(
        has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'INSERT'),
        has_table_privilege(c.oid, 'UPDATE'), has_table_privilege(c.oid, 'DELETE')) END
    )), '[]'::json) FROM pg_class c WHERE c.relnamespace = n.oid) AS relations,
  (SELECT coalesce(json_agg(json_build_object('name', p.proname, 'execute', has_function_privilege(p.oid, 'EXECUTE'))), '[]'::json)
     FROM pg_proc p WHERE p.pronamespace = n.oid) AS functions
FROM (SELECT 1) AS one LEFT JOIN pg_namespace n ON n.nspname = $1`;

export async function readCatalog(
  client: PoolClient,
  schema: string,
  server: string,
): Promise<Catalog> {
  const result = await client.query<{
    role: string;
    database: string;
    database_create: boolean;
    schema_exists: boolean;
    schema_usage: boolean;
    schema_create: boolean;
    keyword: string | null;
    relations: RelationRow[];
    functions: { name: string; execute: boolean }[];
  }>(CATALOG_SQL, [schema]);
  const row = result.rows[0];
  if (row === undefined) throw new Error("the catalog query returned no row");
  const functions = new Map<string, boolean>();
  for (const f of row.functions)
    functions.set(f.name, (functions.get(f.name) ?? true) && f.execute);
  return {
    server,
    schema,
    role: row.role,
    database: row.database,
    databaseCreate: row.database_create,
    schemaExists: row.schema_exists,
    schemaUsage: row.schema_usage,
    schemaCreate: row.schema_create,
    keyword: row.keyword,
    relations: new Map(row.relations.map((r) => [r.name, r])),
    functions,
  };
}

/** An identifier as it would be written in a GRANT statement. */
function ident(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

function where(c: Catalog): string {
  return `PostgreSQL ${c.server}: schema ${c.schema}`;
}

function rightsError(c: Catalog, what: string, grant: string, table?: string): StorageIOError {
  return new StorageIOError(
    `${where(c)}: role ${ident(c.role)} ${what}; nothing was changed. Grant it (${grant}) and open again`,
    table === undefined ? {} : { table },
  );
}

/**
 * Refuses a schema name PostgreSQL reserves (a keyword it cannot take
 * unquoted as a schema name), as the server at hand knows them: a backstop
 * for keywords newer than the list `checkSchemaName` knows.
 */
export function checkKeyword(c: Catalog): void {
  if (c.keyword === "R" || c.keyword === "T")
    throw new TypeError(
      `schema ${JSON.stringify(c.schema)} is a reserved word in PostgreSQL (at ${c.server}); choose another schema name`,
    );
}

/**
 * The `migrations` table, when there is one, must be Durably's: a table of
 * that name without a `version` column belongs to something else.
 */
export function checkMigrationsTable(c: Catalog): boolean {
  const table = c.relations.get("migrations");
  if (table === undefined) return false;
  const columns = table.columns ?? [];
  if (!columns.includes("version"))
    throw new StorageCorrupted(
      `${where(c)}: the ${table.columns === null ? "relation" : "table"} migrations is not Durably's (columns: ${columns.join(", ") || "none"}; Durably's has version, applied_at); nothing was changed. Open with another schema (option schema), or move that table away`,
      { table: "migrations" },
    );
  return true;
}

/**
 * A schema without Durably's `migrations` table must not hold anything the
 * first migration would create: such a table or function is someone
 * else's, and is refused rather than mixed with.
 */
export function checkNoForeignObjects(c: Catalog): void {
  for (const name of Object.keys(TABLES))
    if (name !== "migrations" && c.relations.has(name))
      throw new StorageCorrupted(
        `${where(c)}: the schema already holds a relation ${name} that Durably did not create (there is no Durably migrations table); nothing was changed. Open with another schema (option schema), or move it away`,
        { table: name },
      );
  for (const name of FUNCTIONS)
    if (c.functions.has(name))
      throw new StorageCorrupted(
        `${where(c)}: the schema already holds a function ${name} that Durably did not create (there is no Durably migrations table); nothing was changed. Open with another schema (option schema), or move it away`,
      );
}

/** The role may read the version: USAGE on the schema, SELECT on `migrations`. */
export function checkVersionReadable(c: Catalog): void {
  if (!c.schemaUsage)
    throw rightsError(
      c,
      `lacks USAGE on schema ${c.schema}`,
      `GRANT USAGE ON SCHEMA ${ident(c.schema)} TO ${ident(c.role)}`,
    );
  if (c.relations.get("migrations")?.rights?.[0] !== true)
    throw rightsError(
      c,
      `lacks SELECT on ${c.schema}.migrations`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${ident(c.schema)} TO ${ident(c.role)}`,
      "migrations",
    );
}

/** The role may create what a migration from `from` needs: the schema itself, or objects in it. */
export function checkMigrationRights(c: Catalog, from: number, to: number): void {
  if (!c.schemaExists) {
    if (!c.databaseCreate)
      throw rightsError(
        c,
        `lacks CREATE on database ${ident(c.database)}, needed once to create schema ${c.schema} (a role with it opens first; later opens need only read and write rights)`,
        `GRANT CREATE ON DATABASE ${ident(c.database)} TO ${ident(c.role)}, or create the schema and grant CREATE on it`,
      );
    return;
  }
  const missing = [c.schemaUsage ? "" : "USAGE", c.schemaCreate ? "" : "CREATE"].filter(Boolean);
  if (missing.length > 0)
    throw rightsError(
      c,
      `lacks ${missing.join(" and ")} on schema ${c.schema}, needed to migrate it from version ${from} to ${to} (a role owning the schema migrates it; later opens need only read and write rights)`,
      `GRANT ${missing.join(", ")} ON SCHEMA ${ident(c.schema)} TO ${ident(c.role)}`,
    );
}

/**
 * At the latest version: every table with its columns and every function
 * is there (else `StorageCorrupted` naming the first missing one: the
 * schema was altered outside Durably), and the role has the rights it
 * needs (else `StorageIOError` naming the missing rights and where).
 */
export function checkCurrent(c: Catalog, version: number): void {
  for (const [name, columns] of Object.entries(TABLES)) {
    const table = c.relations.get(name);
    if (table?.columns == null)
      throw new StorageCorrupted(
        `${where(c)}: the schema is at version ${version} but has no table ${name} (dropped outside Durably?)`,
        { table: name },
      );
    const absent = columns.filter((column) => !table.columns?.includes(column));
    if (absent.length > 0)
      throw new StorageCorrupted(
        `${where(c)}: table ${name} lacks column${absent.length === 1 ? "" : "s"} ${absent.join(", ")} that version ${version} has (altered outside Durably?)`,
        { table: name },
      );
  }
  for (const name of FUNCTIONS)
    if (!c.functions.has(name))
      throw new StorageCorrupted(
        `${where(c)}: the schema is at version ${version} but has no function ${name} (dropped outside Durably?)`,
      );
  checkVersionReadable(c);
  // Tables lacking the same rights are named together: "INSERT, UPDATE on s.a, s.b".
  const lacking = new Map<string, string[]>();
  for (const name of Object.keys(TABLES)) {
    const rights = c.relations.get(name)?.rights ?? [];
    const needed = name === "migrations" ? TABLE_RIGHTS.slice(0, 1) : TABLE_RIGHTS;
    const absent = needed.filter((_, i) => rights[i] !== true).join(", ");
    if (absent !== "") lacking.set(absent, [...(lacking.get(absent) ?? []), `${c.schema}.${name}`]);
  }
  const first = [...lacking.values()][0]?.[0];
  if (first !== undefined)
    throw rightsError(
      c,
      `lacks ${[...lacking].map(([rights, tables]) => `${rights} on ${tables.join(", ")}`).join("; ")}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${ident(c.schema)} TO ${ident(c.role)}`,
      first.slice(c.schema.length + 1),
    );
  const barred = FUNCTIONS.filter((name) => c.functions.get(name) !== true);
  if (barred.length > 0)
    throw rightsError(
      c,
      `lacks EXECUTE on ${barred.map((name) => `function ${c.schema}.${name}`).join(", ")}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${ident(c.schema)} TO ${ident(c.role)}`,
    );
}
