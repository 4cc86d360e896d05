import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { hostname } from "node:os";
import { StorageLocked } from "@durably/core";
import type { FileLock } from "./file-system.js";

/**
 * A lock file holding its owner's pid, host and a nonce. Creation is atomic
 * and the file is complete the moment it appears: the content goes to a
 * private temp file first, which is then hard-linked to the lock name
 * (`link` fails if the name exists, like `O_EXCL`, on every local file
 * system and NFS).
 *
 * A lock whose owner is dead (pid gone, e.g. after SIGKILL) is taken over.
 * Taking over must not delete a lock a third process has just created, so
 * the taker first wins an exclusive claim named after the stale lock's
 * nonce, re-reads the lock under that claim, and removes it only if it is
 * still the same stale lock. A claim left by a dead taker is itself taken
 * over the same way (recursively).
 */

interface Holder {
  pid: number;
  host: string;
  nonce: string;
  since: string;
}

/** Nonces this process has created (or is creating): a lock with our pid and one of these is live. */
const ownNonces = new Set<string>();

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Names the file on a system error that carries no path (a read of a
 * directory fails with EISDIR on the descriptor, after the open that named
 * it), so the error says which lock file it is.
 */
function named(error: unknown, path: string): unknown {
  const e = error as NodeJS.ErrnoException;
  if (e instanceof Error && typeof e.code === "string" && e.path === undefined) e.path = path;
  return error;
}

async function readHolder(path: string): Promise<Holder | "unreadable" | undefined> {
  let text: string;
  try {
    text = await fs.promises.readFile(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw named(error, path);
  }
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (
      typeof value.pid === "number" &&
      typeof value.host === "string" &&
      typeof value.nonce === "string" &&
      typeof value.since === "string"
    )
      return value as Holder;
  } catch {
    // fall through: not a lock file we wrote
  }
  return "unreadable";
}

function isAlive(holder: Holder): boolean {
  // A pid on another host cannot be checked from here: assume it is alive.
  if (holder.host !== hostname()) return true;
  // Our own pid: live only if this process made it. Otherwise it is left by an
  // earlier process that had the same pid (a container restarting as pid 1).
  if (holder.pid === process.pid) return ownNonces.has(holder.nonce);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) !== "ESRCH";
  }
}

async function tryCreate(path: string, text: string, nonce: string): Promise<boolean> {
  const temp = `${path}.${nonce}.tmp`;
  await fs.promises.writeFile(temp, text, { flag: "wx" });
  try {
    await fs.promises.link(temp, path);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS")
      throw error;
  } finally {
    await fs.promises.rm(temp, { force: true });
  }
  // No hard links here: O_EXCL create. A reader can see the file before its
  // content; it then reports the lock as held, the safe answer.
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(path, "wx");
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw error;
  }
  try {
    await handle.writeFile(text).catch((error: unknown) => {
      throw named(error, path);
    });
  } finally {
    await handle.close();
  }
  return true;
}

async function removeIfOwned(path: string, nonce: string): Promise<void> {
  const holder = await readHolder(path);
  if (holder !== undefined && holder !== "unreadable" && holder.nonce === nonce)
    await fs.promises.rm(path, { force: true });
}

async function acquire(path: string, owner: Holder, depth: number): Promise<void> {
  if (depth > 8) throw new StorageLocked(`${path}: too many nested stale lock takeovers`);
  const text = `${JSON.stringify(owner)}\n`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await tryCreate(path, text, owner.nonce)) return;
    const holder = await readHolder(path);
    if (holder === undefined) continue; // released meanwhile: try again
    if (holder === "unreadable")
      throw new StorageLocked(
        `${path} exists but is not a readable lock file; if no process uses this storage, delete it`,
        { holder: "unknown" },
      );
    if (isAlive(holder))
      throw new StorageLocked(
        `${path} is held by process ${holder.pid} on ${holder.host} since ${holder.since}; close that storage first`,
        { holder: `pid ${holder.pid} on ${holder.host}` },
      );
    // Stale: the owner died. Remove it under an exclusive claim (see above).
    const claim = `${path}.takeover-${holder.nonce}`;
    await acquire(claim, owner, depth + 1);
    try {
      const again = await readHolder(path);
      if (again !== undefined && again !== "unreadable" && again.nonce === holder.nonce)
        await fs.promises.rm(path, { force: true });
    } finally {
      await removeIfOwned(claim, owner.nonce);
    }
  }
  throw new StorageLocked(`${path}: the lock kept changing hands; gave up after 100 attempts`);
}

/** Takes the lock file at `path` for this process (see the module comment). */
export async function acquireLockFile(path: string): Promise<FileLock> {
  const owner: Holder = {
    pid: process.pid,
    host: hostname(),
    nonce: randomUUID(),
    since: new Date().toISOString(),
  };
  ownNonces.add(owner.nonce);
  try {
    await acquire(path, owner, 0);
  } catch (error) {
    ownNonces.delete(owner.nonce);
    throw error;
  }
  let released: Promise<void> | undefined;
  return {
    release() {
      released ??= removeIfOwned(path, owner.nonce).finally(() => ownNonces.delete(owner.nonce));
      return released;
    },
  };
}
