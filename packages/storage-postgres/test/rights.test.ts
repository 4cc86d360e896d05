import type { ConversationId, StorageWrite } from "@durably/core";
import { afterAll, describe, expect, it } from "vitest";
import { freshSession, openTestStorage, PG_URL, SKIP_REASON, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

const C = 1 as ConversationId;
const conversation = { type: "conversation", value: { id: C } } as StorageWrite;
const entry = (id: number): StorageWrite =>
  ({ type: "entry", value: { id, conversationId: C, kind: "note" } }) as StorageWrite;

function fresh(prefix: string): string {
  return `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
}

/** The test server's URL as another role (the test cluster trusts loopback logins). */
function urlAs(role: string): string {
  const url = new URL(PG_URL);
  url.username = role;
  url.password = "";
  return url.toString();
}

/** A login role with no rights of its own (PUBLIC keeps CONNECT and TEMP on the database, nothing more). */
async function withRole(work: (role: string) => Promise<void>): Promise<void> {
  const role = fresh("r");
  await pool!.query(`CREATE ROLE ${role} LOGIN`);
  try {
    await work(role);
  } finally {
    await pool!.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
  }
}

async function withSchema(work: (schema: string) => Promise<void>): Promise<void> {
  const schema = fresh("t");
  try {
    await work(schema);
  } finally {
    await pool!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

describe.skipIf(!PG_URL)("PostgresStorage > the rights a role needs", () => {
  it("once the schema is at the current version, a role with only USAGE and read/write rights opens, commits and reads (no DDL at open)", async () => {
    await withSchema((schema) =>
      withRole(async (role) => {
        await (await openTestStorage(freshSession(), { schema })).close();
        // No CREATE on the database (PUBLIC has none) nor on the schema.
        await pool!.query(
          `GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
        );
        const session = freshSession("rw");
        for (let round = 0; round < 2; round++) {
          const storage = await openTestStorage(session, { schema, connectionString: urlAs(role) });
          try {
            const seqs: number[] = [];
            await storage.commit(
              round === 0 ? [[conversation], [entry(10)]] : [[entry(11)]],
              (_, seq) => void seqs.push(seq),
            );
            expect(seqs.length).toBe(round === 0 ? 2 : 1);
            expect((await storage.entry(11 as never))?.entry.id ?? 11).toBe(11);
            expect((await storage.conversation(C))?.id).toBe(C);
          } finally {
            await storage.close();
          }
        }
      }),
    );
  });

  it("a read-only role is refused at open with StorageIOError naming the missing rights and tables", async () => {
    await withSchema((schema) =>
      withRole(async (role) => {
        await (await openTestStorage(freshSession(), { schema })).close();
        await pool!.query(
          `GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
        );
        const error = await openTestStorage(freshSession(), {
          schema,
          connectionString: urlAs(role),
        }).catch((e: unknown) => e);
        expect(error).toMatchObject({
          name: "StorageIOError",
          location: { table: "sessions" },
        });
        const message = (error as Error).message;
        expect(message).toContain(
          `role ${role} lacks INSERT, UPDATE, DELETE on ${schema}.sessions`,
        );
        expect(message).toContain(`${schema}.document_revisions`);
        expect(message).toContain("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA");
        const rows = await pool!.query(`SELECT count(*)::int AS n FROM ${schema}.sessions`);
        expect(rows.rows[0]).toEqual({ n: 1 });
      }),
    );
  });

  it("a role without USAGE on the schema is refused with StorageIOError naming USAGE and the schema", async () => {
    await withSchema((schema) =>
      withRole(async (role) => {
        await (await openTestStorage(freshSession(), { schema })).close();
        await expect(
          openTestStorage(freshSession(), { schema, connectionString: urlAs(role) }),
        ).rejects.toMatchObject({
          name: "StorageIOError",
          message: expect.stringContaining(
            `role ${role} lacks USAGE on schema ${schema}`,
          ) as unknown,
        });
      }),
    );
  });

  it("the first open by a role without CREATE on the database is StorageIOError naming that right, and creates nothing", async () => {
    await withSchema((schema) =>
      withRole(async (role) => {
        const error = await openTestStorage(freshSession(), {
          schema,
          connectionString: urlAs(role),
        }).catch((e: unknown) => e);
        expect(error).toMatchObject({ name: "StorageIOError" });
        expect((error as Error).message).toMatch(
          new RegExp(
            `role ${role} lacks CREATE on database \\w+, needed once to create schema ${schema}`,
          ),
        );
        const found = await pool!.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
        expect(found.rowCount).toBe(0);
      }),
    );
  });

  it("a migration due, by a role that may not run it, is StorageIOError naming the schema, and changes nothing", async () => {
    await withSchema((schema) =>
      withRole(async (role) => {
        await (await openTestStorage(freshSession(), { schema })).close();
        await pool!.query(
          `GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}; DELETE FROM ${schema}.migrations WHERE version = 4; DROP FUNCTION ${schema}.fence_round`,
        );
        await expect(
          openTestStorage(freshSession(), { schema, connectionString: urlAs(role) }),
        ).rejects.toMatchObject({
          name: "StorageIOError",
          message: expect.stringContaining(
            `lacks CREATE on schema ${schema}, needed to migrate it from version 3 to 4`,
          ) as unknown,
        });
        // With CREATE on the schema but not owning its tables or functions, the migration fails and rolls back.
        await pool!.query(`GRANT CREATE ON SCHEMA ${schema} TO ${role}`);
        const error = await openTestStorage(freshSession(), {
          schema,
          connectionString: urlAs(role),
        }).catch((e: unknown) => e);
        expect(error).toMatchObject({
          name: "StorageIOError",
          message: expect.stringContaining(
            `migrating schema ${schema} from version 3 to 4 (rolled back: nothing was changed) failed`,
          ) as unknown,
          cause: { code: "42501" },
        });
        const versions = await pool!.query<{ version: number }>(
          `SELECT version FROM ${schema}.migrations ORDER BY version`,
        );
        expect(versions.rows.map((r) => r.version)).toEqual([1, 2, 3]);
      }),
    );
  });
});

if (!PG_URL) it.skip(`rights: ${SKIP_REASON}`, () => undefined);
