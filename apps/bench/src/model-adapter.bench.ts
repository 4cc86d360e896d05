// What @durably/model-ai-sdk costs per streamed chunk: the same AI SDK
// provider stream consumed directly (reader.read() on doStream's parts),
// through aiSdkModel (Durably model events), and, for reference, through the
// AI SDK's own streamText, in the same run, interleaved by rounds (each side
// runs whole in its own turn of a round; the order rotates per round).
// Two providers: an in-memory LanguageModelV3 (the adapter's cost alone) and
// @ai-sdk/openai-compatible over HTTP to a local SSE server in this process
// (the adapter's cost next to a real provider's parsing).
//
//   node --conditions=@durably/source --import tsx apps/bench/src/model-adapter.bench.ts [--smoke]
//
// Writes <repo>/bench-results/model-adapter.json (or BENCH_OUT) and prints a table.
import { cpus, loadavg } from "node:os";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { startOpenAiTestServer } from "@durably/contract-tests";
import { ROOT_CONVERSATION_ID, type ModelRequest } from "@durably/core";
import { aiSdkModel } from "@durably/model-ai-sdk";
import { streamText } from "ai";
import { median } from "./stats.js";
import { int, textTable } from "./table.js";
import { scriptFlags, writeReport } from "./script-flags.js";

const { smoke, outDir } = scriptFlags();
const MEMORY_CHUNKS = smoke ? 2_000 : 50_000;
const HTTP_CHUNKS = smoke ? 300 : 20_000;
const ROUNDS = smoke ? 1 : 5;

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A provider whose stream is `chunks` one-character text deltas, made on demand (no timers). */
function memoryProvider(chunks: number): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "memory",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("stream only")),
    doStream: () => {
      let i = -2;
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        pull(controller) {
          i++;
          if (i === -1) controller.enqueue({ type: "stream-start", warnings: [] });
          else if (i === 0) controller.enqueue({ type: "text-start", id: "t" });
          else if (i <= chunks) controller.enqueue({ type: "text-delta", id: "t", delta: "x" });
          else if (i === chunks + 1) controller.enqueue({ type: "text-end", id: "t" });
          else if (i === chunks + 2)
            controller.enqueue({
              type: "finish",
              finishReason: { unified: "stop", raw: "stop" },
              usage: USAGE,
            });
          else controller.close();
        },
      });
      return Promise.resolve({ stream });
    },
  };
}

const request: ModelRequest = {
  messages: [{ role: "user", content: "stream" }],
  tools: [],
  conversationId: ROOT_CONVERSATION_ID,
};

type Side = "provider stream, read directly" | "aiSdkModel (Durably events)" | "AI SDK streamText";
const SIDES: readonly Side[] = [
  "provider stream, read directly",
  "aiSdkModel (Durably events)",
  "AI SDK streamText",
];

/** Consumes one answer on `side`; returns the text chunks seen (each consumer keeps the text, as a UI would). */
async function consume(side: Side, model: LanguageModelV3): Promise<number> {
  let n = 0;
  let text = "";
  if (side === "provider stream, read directly") {
    const { stream } = await model.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "stream" }] }],
    });
    const reader = stream.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      if (next.value.type === "text-delta") {
        n++;
        text += next.value.delta;
      }
    }
  } else if (side === "aiSdkModel (Durably events)") {
    for await (const event of aiSdkModel(model).stream(request)) {
      if (event.type === "text") {
        n++;
        text += event.delta;
      } else if (event.type === "error") throw new Error(event.message);
    }
  } else {
    const result = streamText({ model, prompt: "stream" });
    for await (const delta of result.textStream) {
      n++;
      text += delta;
    }
  }
  if (text.length === 0) throw new Error(`${side}: no text`);
  return n;
}

interface Row {
  provider: string;
  side: Side;
  chunks: number;
  /** Median over rounds of the whole answer's time. */
  ms: number;
  nsPerChunk: number;
  roundsMs: number[];
}

async function measure(
  provider: string,
  make: () => LanguageModelV3,
  chunks: number,
): Promise<Row[]> {
  for (const side of SIDES) await consume(side, make()); // warm-up, not recorded
  const times = new Map<Side, number[]>(SIDES.map((s) => [s, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = SIDES.map((_, i) => SIDES[(i + round) % SIDES.length] as Side);
    for (const side of order) {
      const start = performance.now();
      const n = await consume(side, make());
      const ms = performance.now() - start;
      if (n < chunks * 0.99 || n > chunks)
        throw new Error(`${provider} / ${side}: ${n} text chunks, expected ${chunks}`);
      times.get(side)?.push(ms);
    }
  }
  return SIDES.map((side) => {
    const roundsMs = times.get(side) ?? [];
    const ms = median(roundsMs);
    return { provider, side, chunks, ms, nsPerChunk: (ms * 1e6) / chunks, roundsMs };
  });
}

const server = await startOpenAiTestServer({
  turns: [{ text: "x".repeat(HTTP_CHUNKS) }],
  chunkSize: 1,
});
try {
  const http = createOpenAICompatible({ name: "local", baseURL: server.url, includeUsage: true });
  const rows = [
    ...(await measure(
      "in-memory LanguageModelV3",
      () => memoryProvider(MEMORY_CHUNKS),
      MEMORY_CHUNKS,
    )),
    ...(await measure(
      "openai-compatible over local HTTP/SSE",
      () => http.chatModel("bench"),
      HTTP_CHUNKS,
    )),
  ];
  const direct = (provider: string) =>
    rows.find((r) => r.provider === provider && r.side === "provider stream, read directly");
  const table = textTable(
    ["provider / consumer", "chunks", "ms (median)", "ns/chunk", "vs direct", "overhead ns/chunk"],
    rows.map((r) => {
      const base = direct(r.provider);
      return [
        `${r.provider} / ${r.side}`,
        int(r.chunks),
        r.ms.toFixed(1),
        int(r.nsPerChunk),
        base ? `${(r.nsPerChunk / base.nsPerChunk).toFixed(2)}x` : "",
        base && r !== base ? int(r.nsPerChunk - base.nsPerChunk) : "",
      ];
    }),
  );
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  console.log(
    `Model adapter overhead per streamed chunk, median of ${ROUNDS} interleaved round(s)${smoke ? " (SMOKE: figures meaningless)" : ""}; node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}, load ${load}\n${table}`,
  );
  console.log(
    "The HTTP rows include the local server writing the SSE in this same process, for every side alike.",
  );
  writeReport(outDir, "model-adapter.json", { smoke, rounds: ROUNDS, load, rows });
} finally {
  await server.close();
}
