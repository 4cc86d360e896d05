import { describe, expect, it } from "vitest";
import { openPostgresHost, openPostgresStorage } from "../src/index.js";
import { checkSchemaName } from "../src/schema-name.js";

// No server needed: names are refused before any connection is made.
const NOWHERE = "postgres://nobody@127.0.0.1:1/none";

describe("PostgresStorage > schema names", () => {
  it.each(["select", "user", "order", "table", "current_user", "system_user"])(
    "the reserved word %j is a TypeError saying so, before any connection",
    async (schema) => {
      await expect(
        openPostgresStorage({ connectionString: NOWHERE, session: "s", schema }),
      ).rejects.toThrow(new RegExp(`schema "${schema}" is a reserved word in PostgreSQL`));
      await expect(openPostgresHost({ connectionString: NOWHERE, schema })).rejects.toBeInstanceOf(
        TypeError,
      );
    },
  );

  it("a name starting with pg_ is a TypeError saying PostgreSQL reserves it", async () => {
    await expect(
      openPostgresStorage({ connectionString: NOWHERE, session: "s", schema: "pg_durably" }),
    ).rejects.toThrow(/names starting with pg_ are reserved by PostgreSQL/);
  });

  it("ordinary names, and keywords PostgreSQL allows as schema names, pass", () => {
    for (const schema of ["durably", "app_1", "_x", "name", "version", "int", "position"])
      expect(checkSchemaName(schema)).toBe(schema);
  });
});
