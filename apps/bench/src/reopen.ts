import { execFileSync } from "node:child_process";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Session } from "@durably/core";
import { backend as backendById } from "./backends.js";
import { bytesOnDisk, sqliteBytes, type Scratch } from "./paths.js";
import type { ChildReport } from "./reopen-child.js";
import { median, ratio } from "./stats.js";
import { createWriterConversations, sessionStep } from "./workload.js";

export type ReopenBackend = "jsonl" | "sqlite";

export interface ReopenRow {
  backend: ReopenBackend;
  commits: number;
  bytesOnDisk: number;
  /** Median ms to `open…Storage` + `Session.open` in a fresh process. */
  durablyMs: number;
  /** Median ms to read the same data raw (JSONL: read + JSON.parse every line; SQLite: open + SELECT every row). */
  rawMs: number;
  /** durablyMs / rawMs: the figure to track. */
  ratio: number;
  /** Resident memory after the reopen (after GC), and its growth over the idle process. */
  durablyRss: number;
  durablyRssGrowth: number;
  rawRss: number;
  rawRssGrowth: number;
  rawItems: number;
}

export interface ReopenResult {
  rows: ReopenRow[];
  /**
   * Per backend: reopen ms per commit at the largest size over the same at the
   * next size down. 1 is linear; the fixed cost of starting makes smaller sizes
   * cost more per commit, so below 1 is fine.
   */
  growth: Record<ReopenBackend, number>;
}

const childPath = fileURLToPath(
  new URL(`./reopen-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

function runChild(backend: ReopenBackend, reader: "durably" | "raw", path: string): ChildReport {
  // Same loader flags as this process (tsx on sources, or none on dist), plus a callable GC.
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, "--expose-gc", childPath, backend, reader, path],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  return JSON.parse(out.trim().split("\n").pop() as string) as ChildReport;
}

/** Writes exactly `commits` workload commits through a Session from up to 64 writers (group commit keeps it quick). */
async function buildLog(id: ReopenBackend, path: string, commits: number): Promise<void> {
  const session = await Session.open(await backendById(id).open(path));
  try {
    const writers = Math.min(64, commits);
    const conversations = await createWriterConversations(session, writers);
    let next = 0;
    await Promise.all(
      conversations.map(async (conversationId) => {
        while (next < commits) {
          const n = ++next;
          await session.commit((tx) => sessionStep(tx, conversationId, n));
        }
      }),
    );
  } finally {
    await session.close();
  }
}

export async function reopenFamily(
  sizes: readonly number[],
  rounds: number,
  scratch: Scratch,
  log: (line: string) => void,
): Promise<ReopenResult> {
  const backends: ReopenBackend[] = ["jsonl", "sqlite"];
  const logs: { backend: ReopenBackend; commits: number; path: string }[] = [];
  for (const commits of sizes)
    for (const backend of backends) {
      const path = scratch.path(
        `reopen-${backend}-${commits}${backend === "sqlite" ? ".sqlite" : ""}`,
      );
      log(`  building ${backend} log of ${commits} commits`);
      await buildLog(backend, path, commits);
      logs.push({ backend, commits, path });
    }
  const samples = logs.map(() => ({ durably: [] as ChildReport[], raw: [] as ChildReport[] }));
  for (let round = 0; round < rounds; round++) {
    for (const [i, l] of logs.entries()) {
      const s = samples[i] as (typeof samples)[number];
      s.durably.push(runChild(l.backend, "durably", l.path));
      s.raw.push(runChild(l.backend, "raw", l.path));
    }
    log(`  reopen round ${round + 1}/${rounds} done`);
  }
  const rows = logs.map((l, i): ReopenRow => {
    const s = samples[i] as (typeof samples)[number];
    const durablyMs = median(s.durably.map((r) => r.ms));
    const rawMs = median(s.raw.map((r) => r.ms));
    const rss = (reports: ChildReport[]) => median(reports.map((r) => r.rss));
    const growth = (reports: ChildReport[]) => median(reports.map((r) => r.rss - r.rssBefore));
    return {
      backend: l.backend,
      commits: l.commits,
      bytesOnDisk: l.backend === "sqlite" ? sqliteBytes(l.path) : bytesOnDisk(l.path),
      durablyMs,
      rawMs,
      ratio: ratio(durablyMs, rawMs),
      durablyRss: rss(s.durably),
      durablyRssGrowth: growth(s.durably),
      rawRss: rss(s.raw),
      rawRssGrowth: growth(s.raw),
      rawItems: median(s.raw.map((r) => r.items)),
    };
  });
  const growthOf = (backend: ReopenBackend): number => {
    const mine = rows.filter((r) => r.backend === backend).sort((a, b) => a.commits - b.commits);
    const big = mine[mine.length - 1];
    const smaller = mine[mine.length - 2];
    if (!big || !smaller) return Number.NaN;
    return ratio(big.durablyMs / big.commits, smaller.durablyMs / smaller.commits);
  };
  return { rows, growth: { jsonl: growthOf("jsonl"), sqlite: growthOf("sqlite") } };
}
