import { StorageLocked } from "@durably/core";
import { join, type SyncFs } from "./node-fs.js";

/**
 * Refuses a LevelDB directory whose `LOCK` another process holds, before
 * LevelDB is asked.
 *
 * LevelDB's own refusal comes too late for the owner's evidence: its open
 * renames the info log `LOG` to `LOG.old` and starts a new `LOG` before it
 * tries the lock, so every refused open replaces `LOG.old`, and two erase
 * the `LOG` the owner's open wrote. Node has no `fcntl` to test the lock
 * with, but Linux lists every POSIX lock in `/proc/locks` (the holder's
 * pid, the file's device and inode), which is enough to tell. Where that
 * table is missing or unreadable (other systems), or lists no lock on this
 * `LOCK`, the open goes on and LevelDB decides, as before: this check only
 * ever refuses a lock it can see.
 */
export function refuseLockedByOther(fs: SyncFs, location: string, ownPid: number): void {
  const pid = lockHolder(fs, location, ownPid);
  if (pid === undefined) return;
  throw new StorageLocked(
    `${location} is locked: process ${pid} has it open (it holds LevelDB's LOCK, as /proc/locks shows). ` +
      `Nothing was opened or changed, LevelDB's info log included.`,
  );
}

/** The pid of another process holding a POSIX lock on `<location>/LOCK`, if `/proc/locks` shows one. */
export function lockHolder(fs: SyncFs, location: string, ownPid: number): number | undefined {
  let table: string;
  let lock: { dev: number; ino: number };
  try {
    lock = fs.statSync(join(location, "LOCK"));
    table = fs.readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined; // no LOCK yet (nobody holds it), or no lock table to read
  }
  const { major, minor } = deviceNumbers(lock.dev);
  for (const line of table.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 24360 fe:00:2220115 0 EOF". A process blocked
    // on a lock is listed as "1: -> POSIX ...", and is not a holder.
    const [, type, , , pid, file] = line.trim().split(/\s+/);
    if (type !== "POSIX" || pid === undefined || file === undefined) continue;
    const [maj, min, ino] = file.split(":");
    if (
      parseInt(maj ?? "", 16) === major &&
      parseInt(min ?? "", 16) === minor &&
      ino === String(lock.ino)
    ) {
      const holder = Number(pid);
      // Its own lock is this process's table's business (`level-owners`).
      if (Number.isSafeInteger(holder) && holder > 0 && holder !== ownPid) return holder;
    }
  }
  return undefined;
}

/**
 * A `st_dev` as glibc's `major()` and `minor()` split it (12 + 20 bits of
 * major and 20 + 12 of minor across the 64-bit number); `/proc/locks`
 * prints the same two numbers in hexadecimal.
 */
export function deviceNumbers(dev: number): { major: number; minor: number } {
  const low = dev % 2 ** 32;
  const high = Math.floor(dev / 2 ** 32);
  return {
    major: ((high & 0xfffff000) | ((low >>> 8) & 0xfff)) >>> 0,
    minor: ((((low >>> 12) | ((high & 0xfff) << 20)) & 0xffffff00) | (low & 0xff)) >>> 0,
  };
}
