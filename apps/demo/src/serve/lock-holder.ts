import { readFile, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Target } from "./target.js";

/**
 * Who holds a storage's single-owner lock, as far as this machine can tell.
 * Only the process id, its name and (JSONL, PostgreSQL) the host and since
 * when: never a command line, which may carry a password.
 */
export interface LockHolder {
  pid?: number;
  /** The process name from /proc/<pid>/comm, e.g. "node". */
  name?: string;
  host?: string;
  since?: string;
  /** PostgreSQL's lease owner string (`<host>:<pid>:<random>` by default). */
  owner?: string;
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

async function processName(pid: number): Promise<string | undefined> {
  try {
    return (await readFile(`/proc/${pid}/comm`, "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pid holding a POSIX lock on `file`, from Linux's /proc/locks (each
 * line: `n: POSIX ADVISORY WRITE <pid> <major>:<minor>:<inode> <start> <end>`).
 * SQLite and LevelDB lock with fcntl, so their owner shows there. Undefined
 * where /proc/locks does not exist or names no process for that file.
 */
export async function posixLockPid(file: string): Promise<number | undefined> {
  let info;
  let table: string;
  try {
    info = await stat(file);
    table = await readFile("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  const major = (info.dev >> 8) & 0xfff;
  const minor = (info.dev & 0xff) | ((info.dev >> 12) & 0xfff00);
  let sameInode: number | undefined;
  for (const line of table.split("\n")) {
    const fields = line.trim().split(/\s+/);
    // `->` marks a process waiting for the lock, not its holder.
    if (fields[1] !== "POSIX") continue;
    const pid = Number(fields[4]);
    const [maj, min, inode] = (fields[5] ?? "").split(":");
    if (Number(inode) !== info.ino || !(pid > 0)) continue;
    if (parseInt(maj ?? "", 16) === major && parseInt(min ?? "", 16) === minor) return pid;
    // Some kernels name the device of the file system underneath (overlays): the inode still fits.
    sameInode ??= pid;
  }
  return sameInode;
}

async function jsonlHolder(dir: string): Promise<LockHolder | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, "LOCK"), "utf8");
  } catch (error) {
    if (errno(error) === "ENOENT") return undefined;
    throw error;
  }
  try {
    const v = JSON.parse(text) as { pid?: unknown; host?: unknown; since?: unknown };
    const holder: LockHolder = {};
    if (typeof v.pid === "number") holder.pid = v.pid;
    if (typeof v.host === "string") holder.host = v.host;
    if (typeof v.since === "string") holder.since = v.since;
    if (holder.pid !== undefined && holder.host === hostname()) {
      const name = await processName(holder.pid);
      if (name !== undefined) holder.name = name;
    }
    return holder;
  } catch {
    return undefined;
  }
}

async function posixHolder(file: string): Promise<LockHolder | undefined> {
  const pid = await posixLockPid(file);
  if (pid === undefined) return undefined;
  const name = await processName(pid);
  return { pid, host: hostname(), ...(name !== undefined ? { name } : {}) };
}

/** Who holds the lock of `target`, found after an open failed with `StorageLocked`. */
export async function findLockHolder(
  target: Target,
  error: { holder?: string | undefined },
): Promise<LockHolder | undefined> {
  switch (target.backend) {
    case "sqlite":
      return posixHolder(target.file);
    case "store":
      return posixHolder(join(target.dir, "LOCK"));
    case "jsonl":
      return jsonlHolder(target.dir);
    case "postgres":
      return error.holder === undefined ? undefined : { owner: error.holder };
    case "memory":
      return undefined;
  }
}

/** "process 1234 (node) on host-a since …", or what is known of it. */
export function describeHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return "another process (this machine cannot tell which)";
  if (holder.owner !== undefined) return `the owner ${JSON.stringify(holder.owner)}`;
  let text = holder.pid === undefined ? "another process" : `process ${holder.pid}`;
  if (holder.name !== undefined) text += ` (${holder.name})`;
  if (holder.host !== undefined && holder.host !== hostname()) text += ` on host ${holder.host}`;
  if (holder.since !== undefined) text += ` since ${holder.since}`;
  return text;
}
