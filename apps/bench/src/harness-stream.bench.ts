// A streamed answer of 10,000 chunks through the harness:
// chunks/s and the storage commits it issued, per backend, next to the
// model stream alone (the ceiling) and to one ordinary commit per chunk
// (what streaming costs without deferred progress), measured in the same run.
// Storage commits must be bounded by the progress window, not by the chunks.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/harness-stream.bench.ts [--smoke]
//
// Writes <repo>/bench-results/harness-stream.json (or BENCH_OUT) and prints a table.
import { cpus } from "node:os";
import {
  defineDoc,
  Harness,
  ROOT_CONVERSATION_ID,
  ScriptedModel,
  Session,
  type Model,
  type ModelEvent,
  type ModelRequest,
  type ModelStreamOptions,
  type Storage,
} from "@durably/core";
import { openJsonlStorage } from "@durably/storage-jsonl";
import { MemoryStorage } from "@durably/storage-memory";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { Scratch } from "./paths.js";
import { int, textTable } from "./table.js";
import { scriptFlags, writeReport } from "./script-flags.js";

const { smoke, outDir } = scriptFlags();
const CHUNKS = smoke ? 500 : 10_000;
/** The paced case streams at this rate, so it lasts CHUNKS / RATE seconds (5 s at full size). */
const RATE = smoke ? 5_000 : 2_000;
const WINDOW_MS = 1000;

interface Row {
  backend: string;
  case: string;
  chunks: number;
  seconds: number;
  chunksPerSecond: number;
  /** `storage.commit` calls during the case. */
  storageCalls: number;
  /** Batches stored, and how many of them carried deferred progress. */
  batches: number;
  deferredBatches: number;
}

/** Yields CHUNKS one-character chunks at `rate` chunks per second, then done. */
class PacedModel implements Model {
  constructor(private readonly rate: number) {}
  async *stream(
    _request: ModelRequest,
    options: ModelStreamOptions = {},
  ): AsyncGenerator<ModelEvent> {
    const start = performance.now();
    for (let i = 0; i < CHUNKS; i++) {
      const due = start + (i * 1000) / this.rate;
      const ahead = due - performance.now();
      if (ahead >= 2) await new Promise((resolve) => setTimeout(resolve, ahead));
      options.signal?.throwIfAborted();
      yield { type: "text", delta: "x" };
    }
    yield { type: "done", stopReason: "stop", usage: { inputTokens: 1, outputTokens: CHUNKS } };
  }
}

const fastModel = (): ScriptedModel =>
  new ScriptedModel([{ text: "x".repeat(CHUNKS) }], { chunkSize: 1 });

type Open = () => Promise<Storage>;

async function harnessCase(backend: string, open: Open, label: string, model: Model): Promise<Row> {
  const harness = await Harness.open(await open(), {
    model,
    settings: { progress: { persistWithinMs: WINDOW_MS } },
  });
  const root = await harness.root();
  await harness.resume();
  let deferredBatches = 0;
  harness.session.subscribeCommits((event) => {
    if (event.deferred) deferredBatches++;
  });
  const before = harness.session.commitStats;
  const start = performance.now();
  const settled = await (await root.submit({ type: "input", content: "stream" })).wait();
  const seconds = (performance.now() - start) / 1000;
  const after = harness.session.commitStats;
  if (settled.status !== "done") throw new Error(`${backend} ${label}: ${JSON.stringify(settled)}`);
  const answer = (await root.entries()).at(-1)?.model?.[0];
  const text =
    answer?.role === "assistant" && answer.content[0]?.type === "text"
      ? answer.content[0].text
      : "";
  if (text.length !== CHUNKS)
    throw new Error(`${backend} ${label}: answer has ${text.length} characters`);
  await harness.close();
  return {
    backend,
    case: label,
    chunks: CHUNKS,
    seconds,
    chunksPerSecond: CHUNKS / seconds,
    storageCalls: after.calls - before.calls,
    batches: after.batches - before.batches,
    deferredBatches,
  };
}

/** The ceiling: consuming the scripted stream with no storage at all. */
async function modelOnly(): Promise<Row> {
  const start = performance.now();
  let n = 0;
  for await (const event of fastModel().stream({
    messages: [],
    tools: [],
    conversationId: ROOT_CONVERSATION_ID,
  }))
    if (event.type === "text") n++;
  const seconds = (performance.now() - start) / 1000;
  return {
    backend: "-",
    case: "model stream alone",
    chunks: n,
    seconds,
    chunksPerSecond: n / seconds,
    storageCalls: 0,
    batches: 0,
    deferredBatches: 0,
  };
}

const Progress = defineDoc<{ text: string }, "conversation">({
  kind: "bench.progress",
  version: 1,
  scope: "conversation",
  initial: () => ({ text: "" }),
});

/** Without deferred progress: one ordinary (durable) commit per chunk, appending to a document. */
async function commitPerChunk(backend: string, open: Open): Promise<Row> {
  const session = await Session.open(await open());
  const before = session.commitStats;
  const start = performance.now();
  for await (const event of fastModel().stream({
    messages: [],
    tools: [],
    conversationId: ROOT_CONVERSATION_ID,
  })) {
    if (event.type !== "text") continue;
    await session.commit(async (tx) => {
      const doc = await tx.doc(Progress, ROOT_CONVERSATION_ID);
      doc.text += event.delta;
    });
  }
  const seconds = (performance.now() - start) / 1000;
  const after = session.commitStats;
  await session.close();
  return {
    backend,
    case: "ordinary commit per chunk",
    chunks: CHUNKS,
    seconds,
    chunksPerSecond: CHUNKS / seconds,
    storageCalls: after.calls - before.calls,
    batches: after.batches - before.batches,
    deferredBatches: 0,
  };
}

const scratch = new Scratch();
try {
  const backends: [string, Open][] = [
    ["memory", () => Promise.resolve(new MemoryStorage())],
    ["SQLite", () => openSqliteStorage(scratch.path("stream.sqlite"))],
    ["JSONL", () => openJsonlStorage(scratch.path("stream-jsonl"))],
  ];
  // Warm the JIT on the code paths measured below (not recorded).
  await modelOnly();
  await harnessCase("warm-up", () => Promise.resolve(new MemoryStorage()), "warm-up", fastModel());
  const rows: Row[] = [await modelOnly()];
  for (const [name, open] of backends) {
    rows.push(await commitPerChunk(name, open));
    rows.push(await harnessCase(name, open, "harness, as fast as the model", fastModel()));
    rows.push(
      await harnessCase(name, open, `harness, paced ${int(RATE)} chunks/s`, new PacedModel(RATE)),
    );
  }
  const table = textTable(
    [
      "backend / case",
      "chunks",
      "seconds",
      "chunks/s",
      "storage calls",
      "batches",
      "deferred batches",
    ],
    rows.map((r) => [
      `${r.backend} / ${r.case}`,
      int(r.chunks),
      r.seconds.toFixed(2),
      int(r.chunksPerSecond),
      int(r.storageCalls),
      int(r.batches),
      int(r.deferredBatches),
    ]),
  );
  const header = `A streamed answer of ${int(CHUNKS)} chunks, progress window ${WINDOW_MS} ms${smoke ? " (SMOKE: figures meaningless)" : ""}; node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}`;
  console.log(`${header}\n${table}`);
  console.log(
    "storage calls of a harness case = submit + reserve + final commit and settle + deferred progress batches (at most one per window, plus the flush before the final commit)",
  );
  writeReport(outDir, "harness-stream.json", {
    smoke,
    chunks: CHUNKS,
    rate: RATE,
    windowMs: WINDOW_MS,
    rows,
  });
} finally {
  scratch.dispose();
}
