import { StorageCorrupted, StorageVersionError } from "@durably/core";
import { backfillChains } from "./backfill-chains.js";
import { backfillChecksums } from "./backfill-checksums.js";
import { backfillTips } from "./backfill-tips.js";
import type { SqliteStatements } from "./sqlite-database.js";

export interface Migration {
  version: number;
  sql: string;
  /** Work on existing rows after `sql`, in the same transaction (computed columns). */
  backfill?: (db: SqliteStatements, location: string) => void;
}

/**
 * The schema, as an append-only list of migrations. Version 1 holds the
 * nine tables with their primary keys; version 2 adds the secondary indexes
 * that make every scan and document read an index range; version 3 gives
 * every row that holds a value a checksum (`crc`, and `state_crc` for the
 * changing part of a document row) and entries a `head` flag, so no index
 * needs SQLite's JSON functions; version 4 links rows into chains that
 * reads verify, so a row the b-tree no longer returns is noticed: each entry
 * names the entry (and each head the head) before it in its conversation,
 * `entry_tips` holds each conversation's newest entry and head, each revision
 * names the revision before it and each document its newest revision;
 * version 5 moves the ends of those chains (each conversation's newest
 * entry and head, each document's newest revision) and the seq counter into
 * one small table, `tips`, so a commit writes one b-tree page for them
 * instead of three (`entry_tips`, the document row, `metadata`).
 * Never edit a shipped migration: add a new one.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE migrations (
        version INTEGER PRIMARY KEY,
        applied_at TEXT NOT NULL
      );
      CREATE TABLE metadata (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE ids (
        namespace TEXT PRIMARY KEY,
        high_water INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        owner_task_id INTEGER,
        record TEXT NOT NULL
      );
      CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL,
        commit_seq INTEGER NOT NULL,
        record TEXT NOT NULL
      );
      CREATE TABLE tasks (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        abort_requested INTEGER NOT NULL,
        background INTEGER NOT NULL,
        owner INTEGER,
        record TEXT NOT NULL
      );
      CREATE TABLE submissions (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL,
        status TEXT NOT NULL,
        request_id TEXT,
        record TEXT NOT NULL
      );
      CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        key TEXT,
        scope TEXT NOT NULL,
        rewindable INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        retired_at INTEGER,
        version INTEGER NOT NULL,
        base_seq INTEGER NOT NULL,
        record TEXT NOT NULL
      );
      CREATE TABLE document_revisions (
        document_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('base', 'delta')),
        content TEXT NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (document_id, seq)
      ) WITHOUT ROWID;
      INSERT INTO metadata (name, value) VALUES ('next_seq', 1);
      INSERT INTO ids (namespace, high_water) VALUES ('global', 1);
    `,
  },
  {
    version: 2,
    sql: `
      CREATE INDEX conversations_by_owner ON conversations (owner_task_id, id) WHERE owner_task_id IS NOT NULL;
      CREATE INDEX entries_by_conversation ON entries (conversation_id, id);
      CREATE INDEX entries_heads ON entries (conversation_id, id) WHERE json_extract(record, '$.head') IS NOT NULL;
      CREATE INDEX tasks_by_conversation ON tasks (conversation_id, id);
      CREATE INDEX tasks_by_kind ON tasks (kind, id);
      CREATE INDEX tasks_by_status ON tasks (status, id);
      CREATE INDEX tasks_by_owner ON tasks (owner, id) WHERE owner IS NOT NULL;
      CREATE INDEX tasks_by_abort_requested ON tasks (abort_requested, id);
      CREATE INDEX tasks_by_background ON tasks (background, id);
      CREATE INDEX submissions_by_conversation ON submissions (conversation_id, id);
      CREATE INDEX submissions_by_status ON submissions (conversation_id, status, id);
      CREATE INDEX submissions_by_request ON submissions (conversation_id, request_id, id) WHERE request_id IS NOT NULL;
      CREATE INDEX documents_by_address ON documents (kind, scope, key, created_at);
      CREATE INDEX documents_by_scope ON documents (scope, id);
      CREATE INDEX documents_by_scope_kind ON documents (scope, kind, id);
      CREATE INDEX documents_live_by_scope ON documents (scope, id) WHERE retired_at IS NULL;
      CREATE INDEX documents_live_by_scope_kind ON documents (scope, kind, id) WHERE retired_at IS NULL;
    `,
  },
  {
    version: 3,
    sql: `
      ALTER TABLE conversations ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entries ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entries ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE tasks ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE submissions ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE documents ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE documents ADD COLUMN state_crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE document_revisions ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE metadata ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE ids ADD COLUMN crc INTEGER NOT NULL DEFAULT 0;
      DROP INDEX entries_heads;
    `,
    // The new heads index needs the head flags, so it is built after the backfill.
    backfill: (db, location) => {
      backfillChecksums(db, location);
      db.run("CREATE INDEX entries_heads ON entries (conversation_id, id) WHERE head = 1");
    },
  },
  {
    version: 4,
    sql: `
      ALTER TABLE entries ADD COLUMN prev INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entries ADD COLUMN prev_head INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE entry_tips (
        conversation_id INTEGER PRIMARY KEY,
        last_id INTEGER NOT NULL,
        last_head INTEGER NOT NULL,
        crc INTEGER NOT NULL
      ) WITHOUT ROWID;
      ALTER TABLE documents ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE document_revisions ADD COLUMN prev_seq INTEGER NOT NULL DEFAULT 0;
    `,
    backfill: backfillChains,
  },
  {
    version: 5,
    // `id` is a conversation's (chain 'entries'), a document's ('revisions') or 0 ('seq').
    sql: `
      CREATE TABLE tips (
        id INTEGER NOT NULL,
        chain TEXT NOT NULL CHECK (chain IN ('entries', 'revisions', 'seq')),
        newest INTEGER NOT NULL,
        newest_head INTEGER NOT NULL,
        crc INTEGER NOT NULL,
        PRIMARY KEY (id, chain)
      ) WITHOUT ROWID;
    `,
    backfill: backfillTips,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** A row of one of the reads `schemaReads` asks for. */
type Row = Record<string, unknown>;

/**
 * The schema version stored in an open database, as a sequence of reads:
 * it yields each statement's SQL, is given back its rows, and returns the
 * version, so the same decision runs on a synchronous transaction
 * (`storedSchemaVersion`) and on the facade's asynchronous calls (open's
 * ownership decision). It only reads. 0 is an empty file (no schema
 * objects at all, and a zero `application_id` and `user_version` in its
 * header). Anything else that is not a Durably file (a file with other
 * tables, a `migrations` table of another shape or without the versions
 * Durably writes, an application id or user version set by another
 * program) is refused with `StorageCorrupted` naming the file, so open
 * never adopts a file it did not write.
 */
export function* schemaReads(location: string): Generator<string, number, Row[]> {
  const foreign = (why: string, table?: string): StorageCorrupted =>
    new StorageCorrupted(`${location} is not a Durably SQLite storage: ${why}`, {
      file: location,
      ...(table !== undefined ? { table } : {}),
    });
  const objects = (yield "SELECT type, name FROM sqlite_master") as {
    type: string;
    name: string;
  }[];
  if (objects.length === 0) {
    const [header] =
      yield "SELECT (SELECT application_id FROM pragma_application_id) AS application_id, (SELECT user_version FROM pragma_user_version) AS user_version";
    const applicationId = Number(header?.application_id ?? 0);
    const userVersion = Number(header?.user_version ?? 0);
    if (applicationId !== 0 || userVersion !== 0)
      throw foreign(
        `it has no tables, but its header carries application_id ${applicationId} and user_version ${userVersion}, which Durably never sets`,
      );
    return 0;
  }
  const tables = objects.filter((o) => o.type === "table").map((o) => o.name);
  if (!tables.includes("migrations"))
    throw foreign(
      tables.length > 0
        ? `it has tables (${tables.join(", ")}) but no migrations table`
        : `it has schema objects (${objects.map((o) => `${o.type} ${o.name}`).join(", ")}) but no tables`,
      "migrations",
    );
  const columns = (yield "SELECT name FROM pragma_table_info('migrations') ORDER BY cid").map((c) =>
    String(c.name),
  );
  if (columns.join(",") !== "version,applied_at")
    throw foreign(
      `its migrations table has columns (${columns.join(", ")}), not Durably's (version, applied_at)`,
      "migrations",
    );
  const [row] =
    yield "SELECT min(version) AS low, max(version) AS high, count(*) AS count FROM migrations";
  const low = row?.low;
  const high = row?.high;
  const count = Number(row?.count ?? 0);
  // A newer release's versions are its own to judge (the caller refuses them as newer).
  if (low === 1 && typeof high === "number" && Number.isSafeInteger(high) && high > SCHEMA_VERSION)
    return high;
  // The versions this package writes: version 1 and each later one, one row each.
  if (
    low !== 1 ||
    typeof high !== "number" ||
    !Number.isSafeInteger(high) ||
    high - low + 1 !== count
  )
    throw foreign(
      count === 0
        ? "its migrations table is empty (a Durably file records version 1 in the transaction that creates it)"
        : `its migrations table does not hold the versions Durably writes (1 up to the newest, one row each): ${count} rows, lowest ${String(low)}, highest ${String(high)}`,
      "migrations",
    );
  return high;
}

/** `schemaReads` on a synchronous transaction. */
export function storedSchemaVersion(db: SqliteStatements, location: string): number {
  const reads = schemaReads(location);
  let step = reads.next();
  while (step.done !== true) step = reads.next(db.all<Row>(step.value));
  return step.value;
}

/**
 * Refuses a schema version this package cannot open: a file written by a
 * newer release is refused with `StorageVersionError` rather than guessed at.
 */
export function refuseNewer(version: number, location: string): void {
  if (version > SCHEMA_VERSION)
    throw new StorageVersionError(
      `${location} has schema version ${version}; this @durably/storage-sqlite understands versions up to ${SCHEMA_VERSION}. Upgrade the package to open it.`,
    );
}

/**
 * Brings the schema to `target` (default: the latest) inside the caller's
 * transaction, so an interrupted upgrade leaves the file at its old version.
 * A file written by a newer release is refused rather than guessed at.
 */
export function migrate(
  db: SqliteStatements,
  location: string,
  target = SCHEMA_VERSION,
): { from: number; to: number } {
  const from = storedSchemaVersion(db, location);
  refuseNewer(from, location);
  const appliedAt = new Date().toISOString();
  for (const migration of MIGRATIONS) {
    if (migration.version <= from || migration.version > target) continue;
    for (const statement of splitStatements(migration.sql)) db.run(statement);
    migration.backfill?.(db, location);
    db.run("INSERT INTO migrations (version, applied_at) VALUES (?, ?)", [
      migration.version,
      appliedAt,
    ]);
  }
  return { from, to: Math.max(from, Math.min(target, SCHEMA_VERSION)) };
}

/** Our migrations hold no string literals with semicolons, so a plain split is exact. */
function splitStatements(sql: string): string[] {
  return sql
    .split(";")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
