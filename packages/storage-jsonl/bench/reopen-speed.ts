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

async function child(reader: string, dir: string): Promise<void> {
  const start = performance.now();
  if (reader === "durably") {
    const session = await Session.open(await openJsonlStorage(dir));
    const ms = performance.now() - start;
    await session.close();
    process.stdout.write(`${ms}\n`);
  } else {
    rawRead(dir);
    process.stdout.write(`${performance.now() - start}\n`);
  }
}

function measure(reader: "durably" | "raw", dir: string): number {
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--child", reader, dir],
    { encoding: "utf8" },
  );
  return Number(out.trim());
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
      const durably: number[] = [];
      const raw: number[] = [];
      for (let r = 0; r < rounds; r++) {
        durably.push(measure("durably", dir));
        raw.push(measure("raw", dir));
      }
      const d = median(durably);
      const w = median(raw);
      console.log(
        `${commits} commits (${(bytes / 1048576).toFixed(1)} MiB): reopen ${d.toFixed(1)} ms, raw read+parse ${w.toFixed(1)} ms, ratio ${(d / w).toFixed(2)} (median of ${rounds})`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
