/**
 * Checks a session key. U+0000 and lone surrogates cannot be stored exactly
 * in `text`, so two such keys could meet; the length bound keeps keys
 * inside one btree page with room to spare.
 */
export function checkSessionKey(where: string, session: unknown): string {
  if (
    typeof session !== "string" ||
    session.length === 0 ||
    session.length > 1000 ||
    session.includes("\u0000") ||
    /\p{Surrogate}/u.test(session)
  )
    throw new TypeError(
      `${where}: session must be a non-empty, well-formed string of at most 1000 characters without U+0000, got ${describe(session)}`,
    );
  return session;
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return value === null ? "null" : typeof value;
}
