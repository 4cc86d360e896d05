import {
  StorageCorrupted,
  StorageIOError,
  type ConversationId,
  type StorageWrite,
} from "@durably/core";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresHost, openPostgresStorage } from "../src/index.js";
import { migrations } from "../src/schema.js";
import { ioFailure } from "../src/open-errors.js";
import { FUNCTIONS, TABLES } from "../src/schema-check.js";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

const C = 1 as ConversationId;
const conversation = { type: "conversation", value: { id: C } } as StorageWrite;

function fresh(prefix: string): string {
  return `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
}

function urlFor(database: string, password?: string): string {
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  if (password !== undefined) url.password = password;
  return url.toString();
}

async function withSchema(work: (schema: string) => Promise<void>): Promise<void> {
  const schema = fresh("t");
  try {
    await work(schema);
  } finally {
    await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

/** The relations of a schema, to show a refused open left it as it was. */
async function relations(schema: string): Promise<string[]> {
  const found = await pool!.query<{ relname: string }>(
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1",
    [schema],
  );
  return found.rows.map((r) => r.relname);
}

describe("ioFailure", () => {
  it("a name with several addresses that all refused (Node's AggregateError, no message of its own) says each attempt", () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: "ECONNREFUSED" });
    const all = Object.assign(new AggregateError([refused("::1:1"), refused("127.0.0.1:1")], ""), {
      code: "ECONNREFUSED",
    });
    const error = ioFailure(all, "localhost:1/appdb", 'opening session "s"');
    expect(error).toBeInstanceOf(StorageIOError);
    expect((error as Error).message).toBe(
      'PostgreSQL localhost:1/appdb: opening session "s" failed: connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1 [ECONNREFUSED]',
    );
    expect((error as Error).cause).toBe(all);
  });
});

describe.skipIf(!PG_URL)("PostgresStorage > open and read errors are typed", () => {
  it("an unreachable server is StorageIOError naming host:port/database (never the password), the driver's error as cause", async () => {
    const error = await openPostgresStorage({
      connectionString: "postgres://someone:s3cret-pw@127.0.0.1:1/appdb",
      session: "s",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageIOError);
    const message = (error as Error).message;
    expect(message).toContain("127.0.0.1:1/appdb");
    expect(message).toContain('opening session "s"');
    expect(message).not.toContain("s3cret-pw");
    expect((error as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("openPostgresHost: an unreachable server is StorageIOError too, naming the server and not the password", async () => {
    const error = await openPostgresHost({
      connectionString: "postgres://someone:s3cret-pw@127.0.0.1:1/appdb",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageIOError);
    const message = (error as Error).message;
    expect(message).toContain("127.0.0.1:1/appdb: opening a host failed");
    expect(message).not.toContain("s3cret-pw");
    expect((error as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("a missing database is StorageIOError naming it", async () => {
    const error = await openPostgresStorage({
      connectionString: urlFor("no_such_db_here", "hidden-pw"),
      session: "s",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageIOError);
    expect((error as Error).message).toMatch(/:\d+\/no_such_db_here: opening session "s" failed/);
    expect((error as Error).message).not.toContain("hidden-pw");
    expect((error as Error).cause).toMatchObject({ code: "3D000" });
  });

  it("a read while the database refuses connections is StorageIOError naming the table and session", async () => {
    const database = fresh("db");
    await pool!.query(`CREATE DATABASE ${database}`);
    try {
      const session = freshSession("read");
      const storage = await openPostgresStorage({ connectionString: urlFor(database), session });
      try {
        await storage.commit([[conversation]], () => undefined);
        await pool!.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
        // End the pooled connections, not the liveness one (it holds the host's advisory lock).
        await pool!.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity a WHERE datname = $1
             AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory')`,
          [database],
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        const error = await storage.conversation(C).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StorageIOError);
        expect(error).toMatchObject({ location: { table: "conversations" } });
        expect((error as Error).message).toContain(
          `/${database}: reading durably.conversations of session ${JSON.stringify(session)} failed`,
        );
        expect((error as Error).cause).toBeInstanceOf(pg.DatabaseError);
      } finally {
        await pool!.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
        await storage.close();
      }
    } finally {
      await pool!.query(`DROP DATABASE ${database} WITH (FORCE)`);
    }
  });

  it("a schema holding a foreign sessions table is StorageCorrupted naming schema and table, and is left as it was", async () => {
    await withSchema(async (schema) => {
      await pool!.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.sessions (id serial PRIMARY KEY, user_name text)`,
      );
      const before = await relations(schema);
      const error = await openTestStorage(freshSession(), { schema }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(error).toMatchObject({ location: { table: "sessions" } });
      expect((error as Error).message).toContain(`schema ${schema}`);
      expect((error as Error).message).toContain("relation sessions that Durably did not create");
      expect(await relations(schema)).toEqual(before);
    });
  });

  it("a foreign migrations table (no version column) is StorageCorrupted naming it, and is left as it was", async () => {
    await withSchema(async (schema) => {
      await pool!.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.migrations (name text PRIMARY KEY, ran_at timestamptz)`,
      );
      const before = await relations(schema);
      const error = await openTestStorage(freshSession(), { schema }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(error).toMatchObject({ location: { table: "migrations" } });
      expect((error as Error).message).toContain(
        `schema ${schema}: the table migrations is not Durably's`,
      );
      expect(await relations(schema)).toEqual(before);
    });
  });

  it("a foreign object only the migration meets (an index of the same name) is StorageCorrupted, rolled back", async () => {
    await withSchema(async (schema) => {
      await pool!.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.other (a int); CREATE INDEX entries_heads ON ${schema}.other (a)`,
      );
      const before = await relations(schema);
      const error = await openTestStorage(freshSession(), { schema }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toContain("entries_heads");
      expect((error as Error).message).toContain("rolled back");
      expect(await relations(schema)).toEqual(before);
    });
  });

  it("a current schema with a column dropped is refused at open with StorageCorrupted naming table and column", async () => {
    await withSchema(async (schema) => {
      await (await openTestStorage(freshSession(), { schema })).close();
      await pool!.query(`ALTER TABLE ${schema}.entries DROP COLUMN is_head`);
      const error = await openTestStorage(freshSession(), { schema }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect(error).toMatchObject({ location: { table: "entries" } });
      expect((error as Error).message).toContain("table entries lacks column is_head");
    });
  });

  it("the structure an open checks is exactly what the migrations create", async () => {
    await withSchema(async (schema) => {
      await (await openTestStorage(freshSession(), { schema })).close();
      const columns = await pool!.query<{ table_name: string; column_name: string }>(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position",
        [schema],
      );
      const found: Record<string, string[]> = {};
      for (const row of columns.rows) (found[row.table_name] ??= []).push(row.column_name);
      expect(found).toEqual(
        Object.fromEntries(Object.entries(TABLES).sort(([a], [b]) => (a < b ? -1 : 1))),
      );
      const functions = await pool!.query<{ proname: string }>(
        "SELECT DISTINCT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1",
        [schema],
      );
      expect(functions.rows.map((r) => r.proname)).toEqual([...FUNCTIONS].sort());
      const versions = await pool!.query<{ version: number }>(
        `SELECT max(version) AS version FROM ${schema}.migrations`,
      );
      expect(versions.rows[0]?.version).toBe(migrations(schema).at(-1)?.version);
    });
  });
});

if (!PG_URL) it.skip(`open errors: ${SKIP_REASON}`, () => undefined);
