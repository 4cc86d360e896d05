import { afterAll, describe, expect, it } from "vitest";
import { exactText, literal } from "../src/sql-literals.js";
import { PG_URL, testPool } from "./support/server.js";

const pool = PG_URL ? testPool() : undefined;
afterAll(async () => pool?.end());

const TRICKY = [
  "plain",
  "it's",
  "back\\slash",
  "\\'; DROP TABLE x; --",
  "'' \\\\ '",
  "ünïcødé 😀",
  "tab\tnew\nline",
];

describe("SQL literals", () => {
  it("refuse what SQL cannot hold exactly (U+0000, unsafe integers) instead of truncating or rounding", () => {
    expect(() => literal("a\u0000b")).toThrow(TypeError);
    expect(() => literal(2 ** 53)).toThrow(TypeError);
    expect(() => literal(1.5)).toThrow(TypeError);
    expect([literal(null), literal(true), literal(false), literal(42)]).toEqual([
      "NULL",
      "TRUE",
      "FALSE",
      "42",
    ]);
  });

  it("exactText keeps U+0000 and lone surrogates distinct as JSON text", () => {
    expect(exactText("a\u0000")).toBe('"a\\u0000"');
    expect(exactText("x\ud800")).not.toBe(exactText("x\udbff"));
  });

  it.skipIf(!PG_URL)(
    "the server reads every quoted string back exactly, with and without standard_conforming_strings",
    async () => {
      const client = await pool!.connect();
      try {
        for (const setting of ["on", "off"]) {
          await client.query(`SET standard_conforming_strings = ${setting}`);
          for (const value of TRICKY) {
            const r = await client.query<{ v: string }>(`SELECT ${literal(value)}::text AS v`);
            expect(r.rows[0]?.v, `${setting}: ${value}`).toBe(value);
          }
        }
      } finally {
        await client.query("RESET standard_conforming_strings");
        client.release();
      }
    },
  );
});
