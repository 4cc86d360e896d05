import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageLocked } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { deviceNumbers, lockHolder } from "../src/level-lock-holder.js";
import type { SyncFs } from "../src/node-fs.js";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";

/** Every file of the directory with its bytes. */
function snapshot(location: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(location).sort())
    files.set(name, readFileSync(join(location, name)).toString("base64"));
  return files;
}

/** A file system that stats `LOCK` as device `dev`, inode `ino`, and reads `table` as /proc/locks. */
function fakeFs(dev: number, ino: number, table: string | Error): SyncFs {
  return {
    statSync: () => ({ dev, ino, size: 0, isDirectory: () => false }),
    readFileSync: () => {
      if (table instanceof Error) throw table;
      return table;
    },
  } as unknown as SyncFs;
}

describe("levelStore > a directory another process holds is refused before LevelDB opens", () => {
  it("a second process gets StorageLocked naming the owner's pid, twice, and the owner's LOG and LOG.old stay as they were (LevelDB would rotate them)", async () => {
    const dir = tempDir();
    const location = join(dir, "db");
    // Opened and closed once first, so that the owner's open leaves both LOG and LOG.old.
    await (await StoreStorage.open(levelStore(new ClassicLevel(location)))).close();
    const child = spawnTs("./fixtures/hold-open.ts", [location]);
    try {
      await waitForLine(child, "ready");
      const before = snapshot(location);
      expect([...before.keys()]).toEqual(expect.arrayContaining(["LOG", "LOG.old", "LOCK"]));
      for (let i = 0; i < 2; i++) {
        const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StorageLocked);
        expect((error as Error).message).toBe(
          `${location} is locked: process ${child.pid} has it open (it holds LevelDB's LOCK, as /proc/locks shows). ` +
            `Nothing was opened or changed, LevelDB's info log included.`,
        );
      }
      expect(snapshot(location)).toEqual(before);
      await killed(child);
      const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      expect(await storage.conversation(1 as never)).toEqual({ id: 1 });
      await storage.close();
    } finally {
      await killed(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads /proc/locks: a POSIX lock on LOCK's device and inode held by another pid is the holder; its own pid, a blocked waiter, another device or inode, a FLOCK or OFD lock, or a pid the kernel does not show (0) are not", () => {
    const dev = 254 * 256; // fe:00
    const line = (rest: string) => `1: ${rest}\n`;
    const holder = (table: string) => lockHolder(fakeFs(dev, 2220115, table), "/d", 100);
    expect(holder(line("POSIX  ADVISORY  WRITE 24360 fe:00:2220115 0 EOF"))).toBe(24360);
    expect(holder(line("POSIX  ADVISORY  WRITE 100 fe:00:2220115 0 EOF"))).toBeUndefined();
    expect(holder(line("-> POSIX  ADVISORY  WRITE 24360 fe:00:2220115 0 EOF"))).toBeUndefined();
    expect(holder(line("POSIX  ADVISORY  WRITE 24360 fe:01:2220115 0 EOF"))).toBeUndefined();
    expect(holder(line("POSIX  ADVISORY  WRITE 24360 fe:00:2220116 0 EOF"))).toBeUndefined();
    expect(holder(line("FLOCK  ADVISORY  WRITE 24360 fe:00:2220115 0 EOF"))).toBeUndefined();
    expect(holder(line("OFDLCK ADVISORY  WRITE -1 fe:00:2220115 0 EOF"))).toBeUndefined();
    expect(holder(line("POSIX  ADVISORY  WRITE 0 fe:00:2220115 0 EOF"))).toBeUndefined();
    expect(
      holder(
        line("POSIX  ADVISORY  WRITE 100 fe:00:2220115 0 EOF") +
          line("POSIX  ADVISORY  WRITE 77 fe:00:2220115 0 EOF"),
      ),
    ).toBe(77);
    expect(holder("")).toBeUndefined();
  });

  it("without a lock table (another system) or without a LOCK file, nothing is refused: LevelDB decides", () => {
    expect(lockHolder(fakeFs(1, 1, new Error("ENOENT: /proc/locks")), "/d", 1)).toBeUndefined();
    const noLock = {
      statSync: () => {
        throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
      },
      readFileSync: () => "1: POSIX  ADVISORY  WRITE 5 00:01:1 0 EOF\n",
    } as unknown as SyncFs;
    expect(lockHolder(noLock, "/d", 1)).toBeUndefined();
  });

  it("splits st_dev into major and minor as glibc does, for numbers past 12 and 20 bits", () => {
    const makedev = (major: number, minor: number): number =>
      Number(
        ((BigInt(major) & 0xfffn) << 8n) |
          ((BigInt(major) & ~0xfffn) << 32n) |
          (BigInt(minor) & 0xffn) |
          ((BigInt(minor) & ~0xffn) << 12n),
      );
    for (const [major, minor] of [
      [254, 0],
      [8, 1],
      [0, 63],
      [259, 1048575],
      [4095, 255],
      [4096, 256],
      [1048575, 65536],
    ] as const)
      expect(deviceNumbers(makedev(major, minor))).toEqual({ major, minor });
  });
});
