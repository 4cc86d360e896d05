import { BACKENDS } from "../backends.js";
import type { BackendName } from "../backend-names.js";
import { CliError } from "../cli.js";
import { detectBackend } from "../detect.js";
import { PG_SCHEMA, PG_URL_VAR, pgUrl, redactPgUrl } from "../postgres-config.js";

/** The prefix that names a PostgreSQL session instead of a file path: `postgres:<session_key>`. */
export const PG_PREFIX = "postgres:";

/** What `demo serve [path]` shows: a storage the demo knows how to open, found from the path alone. */
export type Target =
  | { backend: "memory" }
  | { backend: "sqlite"; file: string }
  | { backend: "jsonl"; dir: string }
  | { backend: "store"; dir: string }
  /** `url` holds the password: it stays in this process, never in a page or a log. */
  | { backend: "postgres"; session: string; url: string };

/** What the page may know about the target: no secret in it (the PostgreSQL URL is redacted). */
export interface TargetInfo {
  backend: BackendName;
  title: string;
  location: string;
}

/**
 * Reads the `serve` argument: none is a fresh in-memory storage;
 * `postgres:<session_key>` a session in the `DURABLY_PG_URL` database; any
 * other path is detected from its files (SQLite header, `main.jsonl`,
 * LevelDB's `CURRENT` and `LOCK`). A path holding no storage is a `CliError`
 * naming what was looked for; nothing is created.
 */
export async function resolveTarget(
  path: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Target> {
  if (path === undefined) return { backend: "memory" };
  if (path.startsWith(PG_PREFIX)) {
    const session = path.slice(PG_PREFIX.length);
    if (session === "")
      throw new CliError(`${path}: name the session, as in postgres:<session_key>`);
    const url = pgUrl(env);
    if (url === undefined)
      throw new CliError(
        `${path}: a PostgreSQL session needs ${PG_URL_VAR} set to the server that holds it`,
      );
    return { backend: "postgres", session, url };
  }
  const found = await detectBackend(path);
  return found.backend === "sqlite"
    ? { backend: "sqlite", file: found.file }
    : { backend: found.backend, dir: found.dir };
}

export function describeTarget(target: Target): TargetInfo {
  const title = BACKENDS[target.backend].title;
  switch (target.backend) {
    case "memory":
      return { backend: "memory", title, location: "this process's memory (gone when it stops)" };
    case "sqlite":
      return { backend: "sqlite", title, location: target.file };
    case "jsonl":
    case "store":
      return { backend: target.backend, title, location: target.dir };
    case "postgres":
      return {
        backend: "postgres",
        title,
        location: `${redactPgUrl(target.url)}, schema ${PG_SCHEMA}, session_key ${JSON.stringify(target.session)}`,
      };
  }
}
