/**
 * Commits per second on the JSONL backend, through the Session (group
 * commit), next to raw `fs` appends of the same lines measured in the same
 * run on the same machine.
 *
 *   pnpm --filter @durably/storage-jsonl bench        (BENCH_SECONDS=2 per case by default)
 *
 * Each commit appends one entry and changes one document (a delta): one
 * sidecar record plus one marker line. The raw baselines append exactly
 * those bytes (taken from the files the storage wrote) with `fs.write` on
 * O_APPEND descriptors, sidecar then main.jsonl, and with fsync flush both
 * after each commit, as a hand-rolled log would. "storage.commit direct"
 * is the same commit without the Session, to tell storage cost from kernel
 * cost.
 */
import * as fs from "node:fs";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defineDoc,
  Session,
  type ConversationId,
  type DocumentId,
  type EntryId,
} from "@durably/core";
import { openJsonlStorage } from "../src/index.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const root = mkdtempSync(join(tmpdir(), "durably-jsonl-bench-"));
let dirs = 0;
const nextDir = () => join(root, `case-${dirs++}`);

const Counter = defineDoc<{ n: number; text: string }>({
  kind: "bench.counter",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "initial",
  initial: () => ({ n: 0, text: "" }),
});

interface Result {
  name: string;
  commits: number;
  seconds: number;
  perSecond: number;
  calls?: number;
}

/** Runs `writers` loops of `step` concurrently for SECONDS (after a short warm-up), counting commits. */
async function measure(
  name: string,
  writers: number,
  step: (writer: number, n: number) => Promise<void>,
  onStart: () => void = () => undefined,
): Promise<Result> {
  const warmUntil = performance.now() + 200;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let n = 0; performance.now() < warmUntil; n++) await step(w, -1 - n);
    }),
  );
  let commits = 0;
  onStart();
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let n = 0; performance.now() < end; n++) {
        await step(w, n);
        commits++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { name, commits, seconds, perSecond: commits / seconds };
}

/**
 * Durably through the Session: `writers` concurrent writers, each in its own
 * conversation with its own document (`shared`: all change the first
 * conversation's document, so a group touches one sidecar).
 */
async function durably(
  name: string,
  fsync: boolean,
  writers: number,
  shared = false,
): Promise<Result & { dir: string }> {
  const dir = nextDir();
  const session = await Session.open(await openJsonlStorage(dir, { fsync }));
  const conversations = await session.commit(async (tx) => {
    const out: ConversationId[] = [];
    for (let i = 0; i < writers; i++)
      out.push((await tx.createConversation({ ownership: { kind: "ownerless" } })).id);
    return out;
  });
  let before = session.commitStats;
  const result = await measure(
    name,
    writers,
    (w, n) =>
      session.commit(async (tx) => {
        const conversationId = conversations[w] as ConversationId;
        await tx.appendEntry(conversationId, {
          kind: "bench.step",
          data: { n, text: `step ${n}` },
        });
        const counter = await tx.doc(
          Counter,
          shared ? (conversations[0] as ConversationId) : conversationId,
        );
        counter.n = n;
      }),
    () => (before = session.commitStats),
  );
  const stats = session.commitStats;
  await session.close();
  return { ...result, calls: stats.calls - before.calls, dir };
}

/** The last sidecar record and marker the storage wrote: the bytes a raw log would append per commit. */
function sampleLines(dir: string): { sidecar: Buffer; marker: Buffer } {
  const lastLine = (file: string) => {
    const text = readFileSync(join(dir, file), "utf8").trimEnd();
    return Buffer.from(`${text.slice(text.lastIndexOf("\n") + 1)}\n`);
  };
  const doc = fs.readdirSync(dir).find((f) => f.startsWith("doc-")) as string;
  return { sidecar: lastLine(doc), marker: lastLine("main.jsonl") };
}

/** storage.commit directly, no Session: the storage's own cost. */
async function direct(name: string): Promise<Result> {
  const storage = await openJsonlStorage(nextDir());
  await storage.commit(
    [
      [
        { type: "conversation", value: { id: 1 as ConversationId } },
        {
          type: "document.create",
          record: {
            id: 2 as DocumentId,
            kind: "bench.counter",
            scope: { kind: "conversation", conversationId: 1 as ConversationId },
          },
          content: { kind: "base", version: 1, value: { n: 0, text: "" } },
        },
      ],
    ],
    () => undefined,
  );
  let id = 10;
  const result = await measure(name, 1, async (_w, n) => {
    await storage.commit(
      [
        [
          {
            type: "entry",
            value: {
              id: id++ as EntryId,
              conversationId: 1 as ConversationId,
              kind: "bench.step",
              data: { n, text: `step ${n}` },
            },
          },
          {
            type: "document.change",
            id: 2 as DocumentId,
            content: { kind: "delta", version: 1, ops: [["s", ["n"], n]] },
          },
        ],
      ],
      () => undefined,
    );
  });
  await storage.close();
  return result;
}

const write = (fd: number, data: Buffer) =>
  new Promise<void>((resolve, reject) =>
    fs.write(fd, data, (error) => (error ? reject(error) : resolve())),
  );
const fsync = (fd: number) =>
  new Promise<void>((resolve, reject) =>
    fs.fsync(fd, (error) => (error ? reject(error) : resolve())),
  );

/** Raw fs: the same two lines per commit, sidecar then main, optionally each flushed. */
async function raw(
  name: string,
  lines: { sidecar: Buffer; marker: Buffer },
  flush: boolean,
): Promise<Result> {
  const dir = nextDir();
  mkdirSync(dir);
  const doc = fs.openSync(join(dir, "doc-2.jsonl"), "a");
  const main = fs.openSync(join(dir, "main.jsonl"), "a");
  const result = await measure(name, 1, async () => {
    await write(doc, lines.sidecar);
    if (flush) await fsync(doc);
    await write(main, lines.marker);
    if (flush) await fsync(main);
  });
  fs.closeSync(doc);
  fs.closeSync(main);
  return result;
}

const noFsync = await durably("durably, no fsync, 1 writer", false, 1);
const lines = sampleLines(noFsync.dir);
const rawNoFsync = await raw("raw fs appends, no fsync", lines, false);
const directNoFsync = await direct("storage.commit direct, no fsync");
const noFsync64 = await durably("durably, no fsync, 64 writers", false, 64);
const rawFsync = await raw("raw fs appends + fsync, 1 writer", lines, true);
const fsync1 = await durably("durably, fsync, 1 writer", true, 1);
const fsync64 = await durably("durably, fsync, 64 writers", true, 64);
const fsync64Shared = await durably("durably, fsync, 64 w, 1 shared doc", true, 64, true);
rmSync(root, { recursive: true, force: true });

const rows: (Result & { vs: string })[] = [
  { ...rawNoFsync, vs: "baseline" },
  {
    ...directNoFsync,
    vs: `${(directNoFsync.perSecond / rawNoFsync.perSecond).toFixed(2)}x raw (storage alone)`,
  },
  {
    ...noFsync,
    vs: `${(noFsync.perSecond / rawNoFsync.perSecond).toFixed(2)}x raw (goal >= 0.4x)`,
  },
  { ...noFsync64, vs: `${(noFsync64.perSecond / rawNoFsync.perSecond).toFixed(2)}x raw` },
  { ...rawFsync, vs: "baseline" },
  { ...fsync1, vs: `${(fsync1.perSecond / rawFsync.perSecond).toFixed(2)}x raw fsync` },
  {
    ...fsync64,
    vs: `${(fsync64.perSecond / fsync1.perSecond).toFixed(1)}x fsync 1 writer (goal >= 10x)`,
  },
  {
    ...fsync64Shared,
    vs: `${(fsync64Shared.perSecond / fsync1.perSecond).toFixed(1)}x fsync 1 writer`,
  },
];
const pad = (s: string, n: number) => s.padEnd(n);
console.log(
  `\nJSONL storage, commits/s (entry + document delta per commit), ${SECONDS}s per case, node ${process.version}\n`,
);
console.log(`${pad("case", 34)} ${pad("commits/s", 10)} ${pad("commits/call", 12)} ratio`);
for (const r of rows)
  console.log(
    `${pad(r.name, 34)} ${pad(Math.round(r.perSecond).toString(), 10)} ${pad(r.calls ? (r.commits / r.calls).toFixed(1) : "-", 12)} ${r.vs}`,
  );
mkdirSync("bench-results", { recursive: true });
writeFileSync(
  "bench-results/commit.json",
  JSON.stringify(
    {
      seconds: SECONDS,
      node: process.version,
      rows: rows.map(({ name, commits, seconds, perSecond, calls, vs }) => ({
        name,
        commits,
        seconds,
        perSecond,
        calls,
        vs,
      })),
    },
    null,
    2,
  ),
);
