/** The environment variable naming the PostgreSQL server the demo may use. */
export const PG_URL_VAR = "DURABLY_PG_URL";
/** The schema `openPostgresStorage` puts Durably's tables in by default. */
export const PG_SCHEMA = "durably";
/** What the tour prints instead of running on PostgreSQL when no server is configured. */
export const PG_SKIPPED = `PostgreSQL: skipped (set ${PG_URL_VAR}=postgres://… to a reachable server to include it)`;

/** The configured connection string, read now (not at import); unset or blank is none. */
export function pgUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[PG_URL_VAR];
  return value === undefined || value.trim() === "" ? undefined : value;
}

export function requirePgUrl(env: NodeJS.ProcessEnv = process.env): string {
  const url = pgUrl(env);
  if (url === undefined) {
    throw new Error(`${PG_URL_VAR} is not set; the PostgreSQL backend needs a server`);
  }
  return url;
}

/** Many sessions share one database: the demo keys each run's by the directory it would have used. */
export const pgSession = (dir: string): string => `demo:${dir}`;

/** The connection string fit to print: no password, neither in the user part nor as a parameter. */
export function redactPgUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  // Anything but a postgres:// URL might hold a password where this cannot tell: show none of it.
  if (parsed === undefined || !["postgres:", "postgresql:"].includes(parsed.protocol)) {
    return `(${PG_URL_VAR}: not a postgres:// URL, not shown)`;
  }
  parsed.password = "";
  for (const key of [...parsed.searchParams.keys()]) {
    if (/pass/i.test(key)) parsed.searchParams.delete(key);
  }
  return parsed.toString();
}

/** Why an open failed, including each attempt of an AggregateError (ECONNREFUSED on ::1 and 127.0.0.1). */
export function failureReason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(failureReason).join("; ");
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const message = error.message || (typeof code === "string" ? code : "");
    return error.name === "Error" ? message : `${error.name}: ${message}`;
  }
  return String(error);
}

/** The server named by DURABLY_PG_URL could not be used: the demo stops here, it never skips silently. */
export class PostgresUnavailable extends Error {
  override readonly name = "PostgresUnavailable";
}
