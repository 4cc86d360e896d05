/**
 * SQL literals for commit scripts. A commit is sent as one multi-statement
 * query (one round trip instead of one per statement), which the simple
 * query protocol allows only without bind parameters, so values are inlined
 * here. Only safe integers, booleans, null and strings ever reach SQL, and
 * strings are quoted the way node-postgres' own `escapeLiteral` does, which
 * is correct whatever `standard_conforming_strings` is set to.
 */
export type Literal = number | string | boolean | null;

export function literal(value: Literal): string {
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value))
      throw new TypeError(`only safe integers are written as SQL numbers, got ${value}`);
    return String(value);
  }
  // A query string ends at U+0000 on the server; every string written here is free of it by
  // construction (JSON text, validated keys), so meeting one is a bug, never data to truncate.
  if (value.includes("\u0000")) throw new TypeError("a SQL literal cannot hold U+0000");
  const quoted = value.replaceAll("'", "''");
  if (!value.includes("\\")) return `'${quoted}'`;
  return `E'${quoted.replaceAll("\\", "\\\\")}'`;
}

/** `(a, b, c)` for a VALUES row. */
export function row(values: readonly Literal[]): string {
  return `(${values.map(literal).join(", ")})`;
}

/**
 * Text the database must hold exactly. PostgreSQL `text` cannot hold U+0000
 * and the driver turns a lone surrogate into U+FFFD, so lookup columns
 * (kinds, keys, request ids) store the JSON encoding of the string, which
 * escapes both and keeps distinct strings distinct.
 */
export function exactText(value: string): string {
  return JSON.stringify(value);
}
