import * as fs from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ClassicLevel } from "classic-level";
import { Session, type EntryId, type StorageWrite } from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { withCommitLatency } from "./backends.js";
import { concurrentLoops, type CommitCase } from "./harness.js";
import type { Scratch } from "./paths.js";
import {
  ENTRY_KIND,
  createWriterConversations,
  seedRawWriters,
  sessionStep,
  stepData,
  stepOps,
  stepWrites,
} from "./workload.js";

/*
 * Raw baselines: the same rows, lines or keys the backend stores for one
 * workload step, written straight to the library with nothing else: no
 * validation, no seq or id bookkeeping, no recovery format. `perCall` commits
 * share one library call (one transaction, one append run, one batch), which
 * is the best a group commit could reach; the Session's many-writers cases are
 * set against the grouped baseline, its one-writer cases against perCall = 1.
 */

const plural = (perCall: number) =>
  perCall === 1 ? "1 commit per call" : `${perCall} commits per call`;

/** Raw `MemoryStorage.commit` (plus `mintId`), without the Session; optionally with a latency per call. */
export function rawMemory(perCall: number, latencyMs = 0): CommitCase {
  const backend = latencyMs > 0 ? `memory-${latencyMs}ms` : "memory";
  return {
    id: `raw/${backend}/${perCall}`,
    family: "raw",
    label: `raw MemoryStorage.commit${latencyMs > 0 ? ` + ${latencyMs} ms` : ""}, ${plural(perCall)}`,
    backend,
    writers: perCall,
    async open() {
      const start = async () => {
        const storage =
          latencyMs > 0 ? withCommitLatency(new MemoryStorage(), latencyMs) : new MemoryStorage();
        return { storage, writers: await seedRawWriters(storage, perCall) };
      };
      let now = await start();
      let n = 0;
      return {
        run: (deadline) =>
          concurrentLoops(
            1,
            deadline,
            async () => {
              const { storage, writers } = now;
              const batches: StorageWrite[][] = [];
              for (const writer of writers)
                batches.push(stepWrites(writer, (await storage.mintId()) as EntryId, ++n));
              await storage.commit(batches, () => undefined);
            },
            perCall,
          ),
        // As the memory backend's Session cases (`Backend.freshEachRound`): the heap stays small.
        beforeRound: async () => {
          await now.storage.close();
          now = await start();
        },
        close: () => now.storage.close(),
      };
    },
  };
}

/**
 * Raw better-sqlite3 with the backend's pragmas and prepared statements: the
 * entry row and the revision row. `full`: `synchronous = FULL`, every
 * transaction fsynced, as the backend's `synchronous: "full"` does.
 */
export function rawSqlite(perCall: number, scratch: Scratch, full = false): CommitCase {
  const backend = full ? "sqlite-full" : "sqlite";
  return {
    id: `raw/${backend}/${perCall}`,
    family: "raw",
    label: `raw better-sqlite3${full ? " FULL" : ""}, ${perCall === 1 ? "1 transaction per commit" : `${perCall} commits per transaction`}`,
    backend,
    writers: perCall,
    open() {
      const db = new Database(scratch.path("raw.sqlite"));
      db.pragma("locking_mode = EXCLUSIVE");
      db.pragma("journal_mode = WAL");
      db.pragma(full ? "synchronous = FULL" : "synchronous = NORMAL");
      db.exec(`
        CREATE TABLE entries (id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL,
          commit_seq INTEGER NOT NULL, record TEXT NOT NULL);
        CREATE INDEX entries_by_conversation ON entries (conversation_id, id);
        CREATE TABLE document_revisions (document_id INTEGER NOT NULL, seq INTEGER NOT NULL,
          kind TEXT NOT NULL, content TEXT NOT NULL, version INTEGER NOT NULL,
          PRIMARY KEY (document_id, seq)) WITHOUT ROWID;
      `);
      const begin = db.prepare("BEGIN IMMEDIATE");
      const commit = db.prepare("COMMIT");
      const insertEntry = db.prepare(
        "INSERT INTO entries (id, conversation_id, commit_seq, record) VALUES (?, ?, ?, ?)",
      );
      const insertRevision = db.prepare(
        "INSERT INTO document_revisions (document_id, seq, kind, content, version) VALUES (?, ?, 'delta', ?, 1)",
      );
      let n = 0;
      return Promise.resolve({
        run: (deadline) =>
          concurrentLoops(
            1,
            deadline,
            () => {
              begin.run();
              for (let w = 0; w < perCall; w++) {
                n++;
                const conversationId = 2 + w;
                const entry = { id: n + 1000, conversationId, kind: ENTRY_KIND, data: stepData(n) };
                insertEntry.run(entry.id, conversationId, n, JSON.stringify(entry));
                insertRevision.run(1000 + w, n, JSON.stringify(stepOps(n)));
              }
              commit.run();
            },
            perCall,
          ),
        close: () => void db.close(),
      });
    },
  };
}

/** One step's lines as the JSONL backend writes them: the sidecar delta record and the commit marker. */
export interface JsonlLines {
  sidecar: Buffer;
  marker: Buffer;
}

/** Runs the workload once on a real JSONL storage and takes its last sidecar line and marker. */
export async function sampleJsonlLines(scratch: Scratch): Promise<JsonlLines> {
  const dir = scratch.path("jsonl-sample");
  const session = await Session.open(await openJsonlStorage(dir));
  const [conversationId] = await createWriterConversations(session, 1);
  if (conversationId === undefined) throw new Error("no conversation created");
  for (let n = 1; n <= 3; n++) await session.commit((tx) => sessionStep(tx, conversationId, n));
  await session.close();
  const lastLine = (file: string) => {
    const text = fs.readFileSync(join(dir, file), "utf8").trimEnd();
    return Buffer.from(`${text.slice(text.lastIndexOf("\n") + 1)}\n`);
  };
  const sidecar = fs.readdirSync(dir).find((f) => f.startsWith("doc-"));
  if (sidecar === undefined) throw new Error(`no doc-*.jsonl sidecar in ${dir}`);
  return { sidecar: lastLine(sidecar), marker: lastLine("main.jsonl") };
}

/** As the JSONL backend's `nodeFileSystem` writes a short append: `writeSync`, on the calling thread. */
const write = (fd: number, data: Buffer) => {
  for (let offset = 0; offset < data.length;)
    offset += fs.writeSync(fd, data, offset, data.length - offset);
};
const fsync = (fd: number) =>
  new Promise<void>((resolve, reject) =>
    fs.fsync(fd, (error) => (error ? reject(error) : resolve())),
  );

/**
 * Raw `fs` appends of the same lines on O_APPEND descriptors, written as the
 * backend writes them (`writeSync`; fsync on libuv's pool) and in its order:
 * each commit's sidecar line to its document's file, then (flushed in
 * parallel with `flush`) the markers to main.jsonl in one write (flushed
 * with `flush`). `lines` is asked for at open, so only a process
 * that opens this case writes the sample storage (`sampleJsonlLines`).
 */
export function rawFs(
  perCall: number,
  flush: boolean,
  lines: () => Promise<JsonlLines>,
  scratch: Scratch,
): CommitCase {
  const backend = flush ? "jsonl-fsync" : "jsonl";
  return {
    id: `raw/${backend}/${perCall}`,
    family: "raw",
    label: `raw fs appends${flush ? " + fsync" : ""}, ${plural(perCall)}`,
    backend,
    writers: perCall,
    async open() {
      const { sidecar, marker } = await lines();
      const dir = scratch.path("raw-fs");
      fs.mkdirSync(dir);
      const docs = Array.from({ length: perCall }, (_, i) =>
        fs.openSync(join(dir, `doc-${i + 3}.jsonl`), "a"),
      );
      const main = fs.openSync(join(dir, "main.jsonl"), "a");
      const markers = Buffer.concat(Array.from({ length: perCall }, () => marker));
      return {
        run: (deadline) =>
          concurrentLoops(
            1,
            deadline,
            async () => {
              for (const fd of docs) write(fd, sidecar);
              if (flush) await Promise.all(docs.map((fd) => fsync(fd)));
              write(main, markers);
              if (flush) await fsync(main);
            },
            perCall,
          ),
        close: () => {
          for (const fd of [...docs, main]) fs.closeSync(fd);
        },
      };
    },
  };
}

const pad = (n: number) => String(n).padStart(16, "0");

/**
 * Raw classic-level `batch()` of the keys StoreStorage writes for a step (entry,
 * entry home, document revision) plus the counters key once per batch.
 */
export function rawLevel(perCall: number, scratch: Scratch): CommitCase {
  return {
    id: `raw/store-level/${perCall}`,
    family: "raw",
    label: `raw classic-level batch(), ${plural(perCall)}`,
    backend: "store-level",
    writers: perCall,
    async open() {
      const db = new ClassicLevel<string, string>(scratch.path("raw-level"));
      await db.open();
      let id = 1000;
      let seq = 1;
      return {
        run: (deadline) =>
          concurrentLoops(
            1,
            deadline,
            async () => {
              const ops: { type: "put"; key: string; value: string }[] = [];
              for (let w = 0; w < perCall; w++) {
                const conversationId = 2 + w;
                id++;
                seq++;
                const entry = { id, conversationId, kind: ENTRY_KIND, data: stepData(seq) };
                ops.push(
                  {
                    type: "put",
                    key: `e/${pad(conversationId)}/${pad(id)}`,
                    value: `{"seq":${seq},"entry":${JSON.stringify(entry)}}`,
                  },
                  { type: "put", key: `ei/${pad(id)}`, value: pad(conversationId) },
                  {
                    type: "put",
                    key: `r/${pad(100 + w)}/${pad(seq)}`,
                    value: JSON.stringify({ kind: "delta", version: 1, ops: stepOps(seq) }),
                  },
                );
              }
              ops.push({ type: "put", key: "m/counters", value: `{"seq":${seq},"ids":${id}}` });
              await db.batch(ops);
            },
            perCall,
          ),
        close: () => db.close(),
      };
    },
  };
}

/** Every raw baseline at 1 and `writers` commits per call. */
export function baselineCases(
  writers: number,
  lines: () => Promise<JsonlLines>,
  scratch: Scratch,
): CommitCase[] {
  return [1, writers].flatMap((perCall) => [
    rawMemory(perCall),
    rawMemory(perCall, 1),
    rawSqlite(perCall, scratch),
    rawSqlite(perCall, scratch, true),
    rawFs(perCall, false, lines, scratch),
    rawFs(perCall, true, lines, scratch),
    rawLevel(perCall, scratch),
  ]);
}
