/**
 * The longest session key, in UTF-8 bytes (what PostgreSQL stores). Every
 * table's indexes lead with `session_key`, and a btree index row may hold at
 * most 2704 bytes: with core's limits on the other indexed strings
 * (`MAX_KIND_BYTES`, `MAX_KEY_BYTES`), the widest row is about 2344 bytes
 * (the arithmetic is next to those limits in @durably/core). Counting
 * characters would not do: 1000 CJK characters are 3000 bytes.
 */
export const MAX_SESSION_KEY_BYTES = 1000;

/**
 * Checks a session key. U+0000 and lone surrogates cannot be stored exactly
 * in `text`, so two such keys could meet; the key is stored as it is (not
 * as JSON text), so its UTF-8 length is what the indexes hold.
 */
export function checkSessionKey(where: string, session: unknown): string {
  if (
    typeof session !== "string" ||
    session.length === 0 ||
    session.includes("\u0000") ||
    /\p{Surrogate}/u.test(session)
  )
    throw new TypeError(
      `${where}: session must be a non-empty, well-formed string of at most ${MAX_SESSION_KEY_BYTES} UTF-8 bytes without U+0000, got ${describe(session)}`,
    );
  // A unit is at most three bytes (a surrogate pair is four for two units), so short keys need no count.
  const bytes = session.length * 3 <= MAX_SESSION_KEY_BYTES ? 0 : Buffer.byteLength(session);
  if (bytes > MAX_SESSION_KEY_BYTES)
    throw new TypeError(
      `${where}: session must be a non-empty, well-formed string of at most ${MAX_SESSION_KEY_BYTES} UTF-8 bytes without U+0000, got ${describe(session)} of ${bytes} bytes`,
    );
  return session;
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return value === null ? "null" : typeof value;
}
