import { spawn, type ChildProcess } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { describe, expect, it } from "vitest";
import { StorageCorrupted } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";
import { tempDir } from "./backends.js";
import { killed, spawnTs, waitForLine } from "./child.js";
import {
  A,
  appendCommits,
  commitRange,
  entryA,
  openOnce,
  reopenAndRead,
  snapshot,
  writeCommits,
} from "./level-files.js";

/**
 * LevelDB replays its write-ahead logs when it opens and then deletes them.
 * When opening one fails (EMFILE, EIO) it logs "Ignoring error" and goes on
 * without it (classic-level leaves paranoid_checks off): the open succeeds
 * without the newest acknowledged commits. levelStore keeps a copy of each
 * live log before the open, checks afterwards that the newest commit the
 * logs held is served, fails the open when it is not, and the next open
 * writes the missing commits again from the copy.
 */

const STRACE = process.env.STRACE_PATH ?? "/usr/bin/strace";
const KEPT = "durably-recovery";

function requireStrace(): void {
  // Fail, never skip: the fault tests need strace (apt-get install -y strace).
  if (!existsSync(STRACE))
    throw new Error(`strace not found at ${STRACE}: install it or set STRACE_PATH`);
}

async function inTemp(run: (location: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    await run(join(dir, "db"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function logs(location: string): string[] {
  return readdirSync(location).filter((name) => name.endsWith(".log"));
}

/** The live log holding the newest commits: the largest-numbered one. */
function newestLog(location: string): string {
  const name = logs(location).sort().at(-1);
  if (name === undefined) throw new Error(`no log in ${location}`);
  return name;
}

/**
 * Traces every thread of `child` except its main one: LevelDB opens its
 * files on libuv's worker threads, the checks before the open run on the
 * main thread, so only LevelDB's own opens of `file` fail.
 */
async function failWorkerOpens(child: ChildProcess, file: string): Promise<ChildProcess> {
  const pid = child.pid as number;
  const workers = readdirSync(`/proc/${pid}/task`).filter((tid) => tid !== String(pid));
  const strace = spawn(
    STRACE,
    [
      ...workers.flatMap((tid) => ["-p", tid]),
      "-o",
      "/dev/null",
      "-P",
      file,
      "-e",
      "trace=openat",
      "-e",
      "inject=openat:error=EMFILE",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let said = "";
  await new Promise<void>((resolve, reject) => {
    strace.stderr?.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      if ((said.match(/attached/g) ?? []).length >= workers.length) resolve();
    });
    strace.once("exit", (code) => reject(new Error(`strace exited (${code}): ${said}`)));
  });
  return strace;
}

/** Opens the store in a child whose LevelDB cannot open `log`; returns what the open reported. */
async function openWithoutLog(location: string, log: string): Promise<Record<string, unknown>> {
  const child = spawnTs("./fixtures/fault-child.ts", ["open-on-go", location], { stdin: true });
  let strace: ChildProcess | undefined;
  try {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await waitForLine(child, "ready");
    strace = await failWorkerOpens(child, join(location, log));
    child.stdin?.end("go\n");
    await exited;
    const line = out.split("\n").find((l) => l.startsWith("{"));
    if (line === undefined) throw new Error(`the child printed no outcome: ${out}`);
    return JSON.parse(line) as Record<string, unknown>;
  } finally {
    if (strace !== undefined) await killed(strace);
    await killed(child);
  }
}

describe("levelStore on classic-level > LevelDB cannot open its newest log while opening (real EMFILE from strace)", () => {
  it("the open fails with StorageIOError naming the log and the missing seqs, keeping a copy; the next open writes those commits again: none lost, no seq reused", async () => {
    requireStrace();
    await inTemp(async (location) => {
      // Commits 1..20 in table files, 21..25 only in the newest log (seqs 22..26).
      await writeCommits(location, 20, { compact: true });
      await appendCommits(location, 21, 25);
      const log = newestLog(location);
      const logBytes = readFileSync(join(location, log));

      const outcome = await openWithoutLog(location, log);
      expect(outcome.name, JSON.stringify(outcome)).toBe("StorageIOError");
      expect(outcome.message).toContain(
        `${join(location, log)}: LevelDB opened the database without replaying this write-ahead log`,
      );
      expect(outcome.message).toContain("the commits of seqs 22 to 26");
      expect(outcome.message).toContain("Too many open files");
      expect(outcome.location).toEqual({ file: join(location, log), seq: 22 });
      // LevelDB went on without the log and deleted it; the kept copy is the same bytes.
      expect(logs(location)).not.toContain(log);
      expect(readFileSync(join(location, KEPT, log))).toEqual(logBytes);

      // The next open (no fault) writes commits 21..25 again from the copy, then removes it.
      expect(await reopenAndRead(location, 25)).toEqual({ prefix: 25 });
      expect(existsSync(join(location, KEPT))).toBe(false);
      const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      const seqs: number[] = [];
      await storage.commit(
        [[{ type: "entry", value: { id: entryA(26), conversationId: A, kind: "n" } } as never]],
        (_index, seq) => seqs.push(seq),
      );
      expect(seqs).toEqual([27]);
      await storage.close();
    });
  });
});

describe("levelStore on classic-level > copies of the write-ahead logs kept during an open", () => {
  it("a verified open leaves no copy behind", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 10);
      expect(logs(location).length).toBeGreaterThan(0);
      await openOnce(location);
      expect(existsSync(join(location, KEPT))).toBe(false);
      expect(await reopenAndRead(location, 10)).toEqual({ prefix: 10 });
    });
  });

  it("when LevelDB replayed only the first commits of a log, the next open writes the rest again from the kept copy, in order", async () => {
    await inTemp(async (location) => {
      await writeCommits(location, 20, { compact: true });
      // One session writes commits 21..25 into one log; a snapshot of the log is taken after 22.
      const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      await commitRange(storage, 21, 22);
      const log = newestLog(location);
      const early = readFileSync(join(location, log));
      await commitRange(storage, 23, 25);
      await storage.close();
      // The whole log kept aside, as an open keeps it; the live log cut back to commits 21 and 22,
      // as if LevelDB had stopped reading it there.
      mkdirSync(join(location, KEPT));
      copyFileSync(join(location, log), join(location, KEPT, log));
      writeFileSync(join(location, log), early);
      expect(await reopenAndRead(location, 25)).toEqual({ prefix: 25 });
      expect(existsSync(join(location, KEPT))).toBe(false);
    });
  });

  it("kept copies that do not continue the store's commits are refused with StorageCorrupted naming the copy, and nothing is written", async () => {
    await inTemp(async (location) => {
      const other = `${location}-other`;
      // Another store whose log holds seqs 1..11, one marker per commit.
      await writeCommits(other, 10);
      // This store: seqs 1..4, then one call storing seqs 5 and 6 under a single marker.
      await writeCommits(location, 3);
      let storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      await storage.commit(
        [
          [{ type: "entry", value: { id: 500, conversationId: A, kind: "n" } } as never],
          [{ type: "entry", value: { id: 501, conversationId: A, kind: "n" } } as never],
        ],
        () => undefined,
      );
      await storage.close();
      await openOnce(location);
      mkdirSync(join(location, KEPT));
      const foreign = newestLog(other);
      copyFileSync(join(other, foreign), join(location, KEPT, foreign));

      const error = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageCorrupted);
      expect((error as Error).message).toContain(join(location, KEPT, foreign));
      expect((error as Error).message).toContain("do not continue the commit the database serves");
      expect((error as StorageCorrupted).location).toEqual({
        file: join(location, KEPT, foreign),
        seq: 7,
      });
      // Refused again, the same way, with the copy still there; the store itself is unchanged.
      expect(readdirSync(join(location, KEPT))).toEqual([foreign]);
      const again = await StoreStorage.open(levelStore(new ClassicLevel(location))).catch(
        (e: unknown) => e,
      );
      expect(again).toBeInstanceOf(StorageCorrupted);
      rmSync(join(location, KEPT), { recursive: true });
      storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
      expect(await storage.entry(501 as never)).toBeDefined();
      expect(await storage.entry(entryA(4))).toBeUndefined();
      await storage.close();
      rmSync(other, { recursive: true, force: true });
    });
  });

  it("when the copy cannot be made (EIO from link), the open fails with StorageIOError naming the log and LevelDB never opens", async () => {
    requireStrace();
    await inTemp(async (location) => {
      await writeCommits(location, 5);
      const log = join(location, newestLog(location));
      const before = snapshot(location);
      const child = spawnTs("./fixtures/fault-child.ts", ["read", location, "1"], {
        prefix: [
          STRACE,
          "-f",
          "-o",
          "/dev/null",
          "-P",
          log,
          "-e",
          "trace=link,linkat",
          "-e",
          "inject=link,linkat:error=EIO",
        ],
      });
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
      await new Promise((resolve) => child.once("exit", resolve));
      const outcome = JSON.parse(out.split("\n").find((l) => l.startsWith("{")) ?? "null") as {
        name: string;
        message: string;
        location: unknown;
      };
      expect(outcome.name, out).toBe("StorageIOError");
      expect(outcome.message).toContain(`cannot keep a copy of the write-ahead log ${log}`);
      expect(outcome.location).toEqual({ file: log });
      // LevelDB did not open: the log is still there and no file changed (the empty folder aside).
      rmSync(join(location, KEPT), { recursive: true, force: true });
      expect(snapshot(location)).toEqual(before);
      expect(await reopenAndRead(location, 5)).toEqual({ prefix: 5 });
    });
  });
});
