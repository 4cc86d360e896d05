/**
 * Reopen time of a JSONL storage against a raw read + JSON.parse of the same
 * files, each measured in a fresh process (median of several rounds).
 *
 *   node --conditions=@durably/source --import tsx bench/reopen-speed.ts [commits...]
 *
 * The log is the project benchmark's workload: 64 writers, each commit one
 * entry plus one delta to its conversation's current-only state document,
 * written through a Session (group commit).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineDoc, Session, type ConversationId } from "@durably/core";
import { openJsonlStorage } from "../src/index.js";

const State = defineDoc<{ n: number; note: string }>({
  kind: "bench.state",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ n: 0, note: "" }),
});

async function build(path: string, commits: number): Promise<void> {
  const session = await Session.open(await openJsonlStorage(path));
  const writers = Math.min(64, commits);
  const conversations = await session.commit(async (tx) => {
    const ids: ConversationId[] = [];
    for (let i = 0; i < writers; i++) {
      const { id } = await tx.createConversation({ ownership: { kind: "ownerless" } });
      await tx.doc(State, id);
      ids.push(id);
    }
    return ids;
  });
  let next = 0;
  await Promise.all(
    conversations.map(async (conversationId) => {
      while (next < commits) {
        const n = ++next;
        await session.commit(async (tx) => {
          await tx.appendEntry(conversationId, {
            kind: "bench.step",
            data: { n, text: `step ${n}: one unit of agent work` },
          });
          (await tx.doc(State, conversationId)).n = n;
        });
      }
    }),
  );
  await session.close();
}

function rawRead(dir: string): number {
  let items = 0;
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".jsonl")) continue;
    const text = readFileSync(join(dir, name), "utf8");
    let start = 0;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
      JSON.parse(text.slice(start, end));
      items++;
      start = end + 1;
    }
  }
  return items;
}

interface Sample {
  /** Wall-clock ms. */
  ms: number;
  /** CPU ms of the process (user + system): steadier than wall time on a shared machine. */
  cpu: number;
  /** Peak resident MiB of the process. */
  rss: number;
}

async function child(reader: string, dir: string): Promise<void> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  let close = () => Promise.resolve();
  if (reader === "durably") {
    const session = await Session.open(await openJsonlStorage(dir));
    close = () => session.close();
  } else rawRead(dir);
  const used = process.cpuUsage(cpu);
  const sample: Sample = {
    ms: performance.now() - start,
    cpu: (used.user + used.system) / 1000,
    rss: process.resourceUsage().maxRSS / 1024,
  };
  await close();
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

function measure(reader: "durably" | "raw", dir: string): Sample {
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--child", reader, dir],
    { encoding: "utf8" },
  );
  return JSON.parse(out.trim()) as Sample;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--child") return child(args[1] as string, args[2] as string);
  const sizes = args.length > 0 ? args.map(Number) : [10_000, 100_000];
  const rounds = 5;
  const root = mkdtempSync(join(tmpdir(), "durably-jsonl-reopen-"));
  try {
    for (const commits of sizes) {
      const dir = join(root, `log-${commits}`);
      await build(dir, commits);
      const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
      const durably: Sample[] = [];
      const raw: Sample[] = [];
      for (let r = 0; r < rounds; r++) {
        durably.push(measure("durably", dir));
        raw.push(measure("raw", dir));
      }
      const of = (samples: Sample[], key: keyof Sample) => median(samples.map((s) => s[key]));
      const [d, w] = [of(durably, "ms"), of(raw, "ms")];
      const [dc, wc] = [of(durably, "cpu"), of(raw, "cpu")];
      console.log(
        `${commits} commits (${(bytes / 1048576).toFixed(1)} MiB), median of ${rounds}: reopen ${d.toFixed(0)} ms (${dc.toFixed(0)} ms CPU, ${of(durably, "rss").toFixed(0)} MiB peak RSS), raw read+parse ${w.toFixed(0)} ms (${wc.toFixed(0)} ms CPU), ratio ${(d / w).toFixed(2)} wall, ${(dc / wc).toFixed(2)} CPU`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
