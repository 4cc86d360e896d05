/**
 * Words PostgreSQL reserves (keywords of categories R and T in
 * `pg_get_keywords()`, PostgreSQL 12 to 17): unquoted, none of them can
 * name a schema. The open asks the server too, for words newer than this list.
 */
const RESERVED = new Set(
  (
    "all analyse analyze and any array as asc asymmetric authorization binary both case cast check " +
    "collate collation column concurrently constraint create cross current_catalog current_date " +
    "current_role current_schema current_time current_timestamp current_user default deferrable desc " +
    "distinct do else end except false fetch for foreign freeze from full grant group having ilike in " +
    "initially inner intersect into is isnull join lateral leading left like limit localtime " +
    "localtimestamp natural not notnull null offset on only or order outer overlaps placing primary " +
    "references returning right select session_user similar some symmetric system_user table " +
    "tablesample then to trailing true union unique user using variadic verbose when where window with"
  ).split(" "),
);

/**
 * Schema names are spliced into SQL unquoted, so only plain lower-case
 * identifiers are accepted, and neither a word PostgreSQL reserves nor a
 * name starting with `pg_` (which PostgreSQL keeps for its own schemas).
 */
export function checkSchemaName(schema: unknown): string {
  if (typeof schema !== "string" || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new TypeError(
      `schema must be a lower-case SQL identifier (letters, digits, _), got ${JSON.stringify(schema)}`,
    );
  if (schema.startsWith("pg_"))
    throw new TypeError(
      `schema ${JSON.stringify(schema)}: names starting with pg_ are reserved by PostgreSQL for its own schemas; choose another`,
    );
  if (RESERVED.has(schema))
    throw new TypeError(
      `schema ${JSON.stringify(schema)} is a reserved word in PostgreSQL (it cannot name a schema unquoted); choose another`,
    );
  return schema;
}
