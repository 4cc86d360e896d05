import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { StorageLocked, type EntryId } from "@durably/core";
import { describe, expect, it } from "vitest";
import { openJsonlStorage } from "../src/index.js";
import { Child } from "./support/child.js";
import { commitAll, w } from "./support/records.js";
import { directoryPerTest } from "./support/test-directory.js";

const dir = directoryPerTest();

const lockFile = () => join(dir.path, "LOCK");

/** A pid that certainly belongs to no live process: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = new Child("hold-child.ts", [join(dir.path, "scratch"), "0"]);
  await child.exited;
  return child.process.pid as number;
}

describe("single owner", () => {
  it("a second open in the same process fails with StorageLocked; after close it opens", async () => {
    const first = await openJsonlStorage(dir.path);
    await expect(openJsonlStorage(dir.path)).rejects.toBeInstanceOf(StorageLocked);
    await first.close();
    expect(existsSync(lockFile())).toBe(false);
    const second = await openJsonlStorage(dir.path);
    await second.close();
  });

  it("while a live child process owns it, open fails; right after SIGKILL of the owner, open succeeds", async () => {
    const seed = await openJsonlStorage(dir.path);
    await commitAll(seed, [w.conversation(1), w.entry(2, 1, "kept")]);
    await seed.close();
    const owner = new Child("hold-child.ts", [dir.path]);
    const opened = await owner.waitFor((l) => l.startsWith("opened"), "opened");
    const error: unknown = await openJsonlStorage(dir.path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageLocked);
    expect((error as StorageLocked).message).toContain(`process ${opened.split(" ")[1]}`);
    await owner.kill();
    // The dead owner's lock file is still there; it must not block.
    expect(JSON.parse(readFileSync(lockFile(), "utf8"))).toMatchObject({ pid: owner.process.pid });
    const storage = await openJsonlStorage(dir.path);
    expect((await storage.entry(2 as EntryId))?.entry.data).toBe("kept");
    await storage.close();
  });

  it("of several processes racing to take over a stale lock, exactly one opens", async () => {
    const pid = await deadPid();
    writeFileSync(
      lockFile(),
      JSON.stringify({ pid, host: hostname(), nonce: "stale", since: new Date(0).toISOString() }),
    );
    const racers = Array.from({ length: 3 }, () => new Child("hold-child.ts", [dir.path, "3000"]));
    const results = await Promise.all(
      racers.map((c) =>
        c.waitFor((l) => l === "locked" || l.startsWith("opened") || l.startsWith("error")),
      ),
    );
    await Promise.all(racers.map((c) => c.kill()));
    expect(results.filter((r) => r.startsWith("opened"))).toHaveLength(1);
    expect(results.filter((r) => r === "locked")).toHaveLength(2);
  }, 60_000);

  it("a lock left with this process's own pid by an earlier process (a restarted container) is taken over", async () => {
    writeFileSync(
      lockFile(),
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        nonce: "earlier",
        since: new Date(0).toISOString(),
      }),
    );
    const storage = await openJsonlStorage(dir.path);
    await storage.close();
  });

  it("a lock held from another host is never taken over (its pid cannot be checked from here)", async () => {
    writeFileSync(
      lockFile(),
      JSON.stringify({
        pid: 1,
        host: `not-${hostname()}`,
        nonce: "remote",
        since: new Date(0).toISOString(),
      }),
    );
    await expect(openJsonlStorage(dir.path)).rejects.toBeInstanceOf(StorageLocked);
  });

  it("an unreadable lock file is reported, not removed", async () => {
    writeFileSync(lockFile(), "garbage");
    await expect(openJsonlStorage(dir.path)).rejects.toThrow(/not a readable lock file/);
    expect(readFileSync(lockFile(), "utf8")).toBe("garbage");
  });
});
