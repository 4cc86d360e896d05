import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { CliError } from "./cli.js";

/** The name the demo gives its SQLite file inside a `--dir`. */
export const SQLITE_FILE = "durably.sqlite";
/** Every SQLite 3 database file starts with these 16 bytes. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

export type Detected =
  | { backend: "sqlite"; file: string }
  | { backend: "jsonl"; dir: string }
  | { backend: "store"; dir: string };

async function hasSqliteHeader(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(SQLITE_HEADER.length);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead === buffer.length && buffer.equals(SQLITE_HEADER);
  } finally {
    await handle.close();
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Tells which backend stored what is at `path`, from the files alone:
 * a file with the SQLite header; a directory with `main.jsonl` (JSONL); a
 * directory with LevelDB's `CURRENT` and `LOCK` (Store on classic-level); a
 * directory with the demo's `durably.sqlite`. Nothing matching, or more
 * than one match, is an error naming what was looked for.
 */
export async function detectBackend(path: string): Promise<Detected> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new CliError(`${path}: no such file or directory`, { cause: error });
  }
  if (info.isFile()) {
    if (await hasSqliteHeader(path)) return { backend: "sqlite", file: path };
    throw new CliError(
      `${path}: not a SQLite database (no "SQLite format 3" header); for JSONL or LevelDB storage pass the directory`,
    );
  }
  if (!info.isDirectory()) throw new CliError(`${path}: neither a file nor a directory`);
  const names = new Set(await readdir(path));
  const found: Detected[] = [];
  if (names.has("main.jsonl") && (await isFile(join(path, "main.jsonl")))) {
    found.push({ backend: "jsonl", dir: path });
  }
  if (names.has("CURRENT") && names.has("LOCK")) found.push({ backend: "store", dir: path });
  const sqlite = join(path, SQLITE_FILE);
  if (names.has(SQLITE_FILE) && (await isFile(sqlite)) && (await hasSqliteHeader(sqlite))) {
    found.push({ backend: "sqlite", file: sqlite });
  }
  const [only, another] = found;
  if (only === undefined) {
    throw new CliError(
      `${path}: no Durably storage found (looked for main.jsonl, LevelDB CURRENT and LOCK files, ${SQLITE_FILE})`,
    );
  }
  if (another !== undefined) {
    throw new CliError(
      `${path}: ambiguous, holds both ${found.map((f) => f.backend).join(" and ")} storage; pass a more specific path`,
    );
  }
  return only;
}
