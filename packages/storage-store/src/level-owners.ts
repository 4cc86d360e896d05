import { StorageLocked } from "@durably/core";
import { errno, nodeFs, nodePath, nodeProcess, type SyncFs, type SyncPath } from "./node-fs.js";

/**
 * The LevelDB directories this process has open through `levelStore`, so a
 * second open of one is refused before LevelDB is asked.
 *
 * LevelDB's `LOCK` is a POSIX `fcntl` lock, which belongs to the process,
 * not to a database. LevelDB (classic-level 3's bundled `env_posix.cc`)
 * keeps a table of the lock files its process holds; a second open of the
 * same directory in the owning process opens `LOCK`, finds it in that table,
 * and closes the new descriptor, and closing any descriptor of a file drops
 * every `fcntl` lock the process holds on it. The second open fails as it
 * should, but the first owner is left without its lock: another process can
 * then open the directory and write beside it, and commits are lost. A
 * second spelling of the same directory (a symlink, `..`, a relative path)
 * is not even in LevelDB's table: both opens succeed, sharing the one lock,
 * and the first to close drops it for the other.
 *
 * So each open claims the directory here first, keyed by its real path
 * (`realpath`, which resolves symlinks and `..`) and, when it exists, by its
 * device and inode (one directory however it is spelled), and a claim
 * already held is refused with `StorageLocked`. A directory that does not
 * exist yet is keyed by the real path of its nearest existing parent and the
 * names below it; the device and inode are added once the open created it.
 * The table lives on `globalThis`, so two copies of this package in one
 * process share it. Worker threads have their own: see the README's limits.
 */

/** A directory this process has open; `release` ends the claim (once). */
export interface OwnerClaim {
  readonly location: string;
  readonly real: string;
  /** Adds the directory's device and inode once it exists (an open that created it). */
  refresh(): void;
  release(): void;
}

interface Holder {
  location: string;
  real: string;
  keys: Set<string>;
}

const TABLE = Symbol.for("@durably/storage-store: LevelDB directories open in this process");

function table(): Map<string, Holder> {
  const global = globalThis as unknown as Record<symbol, Map<string, Holder> | undefined>;
  let found = global[TABLE];
  if (found === undefined) {
    found = new Map();
    global[TABLE] = found;
  }
  return found;
}

interface Node {
  fs: SyncFs;
  path: SyncPath;
  process: NonNullable<ReturnType<typeof nodeProcess>>;
}

function builtins(): Node | undefined {
  const process = nodeProcess();
  const fs = nodeFs();
  const path = nodePath();
  return process === undefined || fs === undefined || path === undefined
    ? undefined
    : { fs, path, process };
}

/**
 * The real path of `location`: `realpath` of it, or of its nearest existing
 * parent joined with the names below it that do not exist yet.
 */
function realPath({ fs, path, process }: Node, location: string): string {
  // Not normalized: `..` after a symlink is the symlink target's parent, which only realpath knows.
  const absolute = path.isAbsolute(location) ? location : `${process.cwd()}${path.sep}${location}`;
  const tail: string[] = [];
  let at = absolute;
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(at), ...tail);
    } catch (error) {
      const code = errno(error);
      if (code !== "ENOENT" && code !== "ENOTDIR") return path.resolve(location);
      const parent = path.dirname(at);
      if (parent === at) return path.resolve(location);
      tail.unshift(path.basename(at));
      at = parent;
    }
  }
}

/** `dev:ino` of the directory at `real`, when it is one. */
function inodeKey(fs: SyncFs, real: string): string | undefined {
  try {
    const stats = fs.statSync(real);
    return stats.isDirectory() ? `inode ${stats.dev}:${stats.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Claims `location` for an open about to ask LevelDB to open it; throws
 * `StorageLocked` naming both spellings when this process has it open
 * already. `undefined` where `node:fs` cannot be reached (no LevelDB on
 * disk there either).
 */
export function claimDirectory(location: string): OwnerClaim | undefined {
  const node = builtins();
  if (node === undefined) return undefined;
  const { fs } = node;
  const real = realPath(node, location);
  const keys = new Set([`path ${real}`]);
  const inode = inodeKey(fs, real);
  if (inode !== undefined) keys.add(inode);
  const owners = table();
  for (const key of keys) {
    const holder = owners.get(key);
    if (holder !== undefined) throw alreadyOpen(location, real, holder, node.process.pid);
  }
  const holder: Holder = { location, real, keys };
  for (const key of keys) owners.set(key, holder);
  let released = false;
  return {
    location,
    real,
    refresh() {
      if (released) return;
      const key = inodeKey(fs, real);
      if (key === undefined || holder.keys.has(key)) return;
      // Another claim under this inode can only be one of ours made before the directory existed.
      if (!owners.has(key)) {
        holder.keys.add(key);
        owners.set(key, holder);
      }
    },
    release() {
      if (released) return;
      released = true;
      for (const key of holder.keys) if (owners.get(key) === holder) owners.delete(key);
    },
  };
}

function alreadyOpen(location: string, real: string, holder: Holder, pid: number): StorageLocked {
  const same =
    holder.location === location
      ? ""
      : ` as ${holder.location}${holder.real === real ? ` (both are ${real})` : ` (${holder.real}), the same directory as ${real}`}`;
  return new StorageLocked(
    `${location} is locked: this process already has it open${same}. A second open in the process that owns a LevelDB directory ` +
      `would make LevelDB drop the process's lock on it (it closes the LOCK file it opened again, and closing any descriptor of ` +
      `the file releases the process's lock), letting another process open it and write beside the owner, so the open was ` +
      `refused before LevelDB was asked: nothing was opened or changed, and the owner keeps its lock. Close the storage that ` +
      `has it open first.`,
    { holder: `this process (pid ${pid})` },
  );
}
