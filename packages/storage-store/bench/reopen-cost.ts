/**
 * What reopening a classic-level store costs a new process: the checks of
 * the LevelDB files before the open (every live table and log), LevelDB's
 * own open, and the commit chain. Each open runs in a fresh child process,
 * as a restarted application would, so the checks run cold (before the
 * JIT has optimized them). Run from the package directory:
 *
 *   node --conditions=@durably/source --import tsx bench/reopen-cost.ts [rounds] [MB]
 *
 * Builds a store of about `MB` megabytes (default 10) of entries, then
 * alternates opens with `checkTables` true and false for `rounds` rounds
 * (default 7). Prints one JSON line: per case the median wall time of
 * `StoreStorage.open` and the median CPU time of the child (all threads)
 * spent in it. To compare versions on the same store in one run, set
 * `DURABLY_BENCH_SRC` to `label=/path/to/src,label=/path/to/src` (copies of
 * another version's `src` inside this package, so they resolve the same
 * dependencies); every round then opens with each of them too.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ClassicLevel } from "classic-level";
import type { StorageWrite } from "@durably/core";
import { StoreStorage, levelStore } from "../src/index.js";

const ROUNDS = Number(process.argv[2] ?? 7);
const MEGABYTES = Number(process.argv[3] ?? 10);
const self = fileURLToPath(import.meta.url);

/** In the child: one open with the code in `src`, timed; prints `{ ms, cpuMs }`. */
async function child(location: string, checkTables: boolean, src: string): Promise<void> {
  const mod = (await import(
    src === "" ? new URL("../src/index.ts", import.meta.url).href : join(src, "index.ts")
  )) as typeof import("../src/index.js");
  const db = new ClassicLevel(location);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const storage = await mod.StoreStorage.open(mod.levelStore(db, { checkTables }));
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  await storage.close();
  process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000 }) + "\n");
}

/** Entries of ~400 bytes of poorly compressible text, 64 per commit call, until the directory holds `megabytes`. */
async function build(location: string, megabytes: number): Promise<number> {
  const storage = await StoreStorage.open(levelStore(new ClassicLevel(location)));
  const none = () => undefined;
  await storage.commit([[{ type: "conversation", value: { id: 1 } } as StorageWrite]], none);
  let id = 10;
  // LevelDB deletes files in the background while it compacts: a file gone since the listing counts 0.
  const sizeOf = (file: string) => {
    try {
      return statSync(join(location, file)).size;
    } catch {
      return 0;
    }
  };
  const size = () => readdirSync(location).reduce((n, f) => n + sizeOf(f), 0);
  while (size() < megabytes * 1e6)
    for (let k = 0; k < 50; k++)
      await storage.commit(
        Array.from({ length: 64 }, () => [
          {
            type: "entry",
            value: {
              id: id++,
              conversationId: 1,
              kind: "m",
              data: Array.from({ length: 40 }, () => Math.random().toString(36).slice(2, 10)),
            },
          } as unknown as StorageWrite,
        ]),
        none,
      );
  await storage.close();
  return size();
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] as number) * 10) / 10;
}

/** The versions to time: this one, and the ones `DURABLY_BENCH_SRC` names. */
function versions(): { label: string; src: string }[] {
  const named = (process.env.DURABLY_BENCH_SRC ?? "")
    .split(",")
    .filter((part) => part.includes("="))
    .map((part) => {
      const [label, src] = part.split("=") as [string, string];
      return { label, src };
    });
  return [{ label: "current", src: "" }, ...named];
}

if (process.argv[2] === "--child") {
  await child(process.argv[3] as string, process.argv[4] === "1", process.argv[5] ?? "");
} else {
  const dir = mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), "durably-reopen-"));
  try {
    const location = join(dir, "db");
    const bytes = await build(location, MEGABYTES);
    const cases = new Map<string, number[][]>();
    const run = (check: boolean, src: string) => {
      const out = execFileSync(
        process.execPath,
        [...process.execArgv, self, "--child", location, check ? "1" : "0", src],
        { encoding: "utf8" },
      );
      const { ms, cpuMs } = JSON.parse(out.trim().split("\n").at(-1) as string) as {
        ms: number;
        cpuMs: number;
      };
      return [ms, cpuMs];
    };
    run(true, ""); // the first open after building replays the log into a table
    for (let r = 0; r < ROUNDS; r++)
      for (const { label, src } of versions())
        for (const check of [true, false]) {
          const name = `${label}, checkTables: ${check}`;
          cases.set(name, [...(cases.get(name) ?? []), run(check, src)]);
        }
    const summary = (xs: number[][]) => ({
      ms: median(xs.map((x) => x[0] as number)),
      cpuMs: median(xs.map((x) => x[1] as number)),
    });
    process.stdout.write(
      JSON.stringify({
        megabytes: Math.round(bytes / 1e5) / 10,
        tables: readdirSync(location).filter((f) => f.endsWith(".ldb")).length,
        rounds: ROUNDS,
        medians: Object.fromEntries([...cases].map(([name, xs]) => [name, summary(xs)])),
      }) + "\n",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
