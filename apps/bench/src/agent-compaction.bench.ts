// A long agent conversation: 2,000 turns on SQLite, compacted every 200 turns
// (`conversation.compact({ keepLastTurns })`), next to the same conversation
// never compacted (600 turns: enough to show the growth, and the run stays
// near a minute), each side in its own round. Per window of 200 turns: the
// median and mean time of a turn (submit to settled), the process CPU per
// turn, and the largest request the model got (messages, characters). With
// compaction the turn cost and the request size must stay flat; without,
// both grow with the conversation.
//
//   node --conditions=@durably/source --import tsx apps/bench/src/agent-compaction.bench.ts [--smoke]
//
// Writes <repo>/bench-results/agent-compaction.json (or BENCH_OUT) and prints a table.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import {
  contentText,
  Harness,
  type Model,
  type ModelEvent,
  type ModelRequest,
  type ModelStreamOptions,
} from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { bytesOnDisk, repoRoot, Scratch } from "./paths.js";
import { median } from "./stats.js";
import { int, ms, textTable } from "./table.js";

const smoke = process.argv.includes("--smoke") || (process.env.BENCH_SMOKE ?? "0") !== "0";
const TURNS = smoke ? 60 : 2_000;
/** The uncompacted side grows per turn; half the turns show it without doubling the run. */
const UNCOMPACTED_TURNS = smoke ? 40 : 600;
const EVERY = smoke ? 20 : 200;
const KEEP = smoke ? 4 : 20;
const outDir = process.env.BENCH_OUT ?? join(repoRoot(), "bench-results");

const QUESTION = (n: number): string =>
  `Question ${n}: ${"please look at the next part of the log and tell me what changed; ".repeat(3)}`;
const ANSWER = (n: number): string =>
  `Answer ${n}: ${"the counters moved by a few percent and nothing else changed in this part; ".repeat(4)}`;
const SUMMARY = `So far: the user walked through a long log part by part; every part showed small counter moves and nothing else. ${"Details were routine. ".repeat(10)}`;

/** Answers every request at once, in a few chunks; records how big each request was. */
class LongChatModel implements Model {
  readonly sizes: { messages: number; chars: number }[] = [];
  private answered = 0;

  async *stream(
    request: ModelRequest,
    options: ModelStreamOptions = {},
  ): AsyncGenerator<ModelEvent> {
    options.signal?.throwIfAborted();
    let chars = request.system?.length ?? 0;
    for (const m of request.messages)
      chars +=
        m.role === "assistant"
          ? m.content.reduce((n, p) => n + (p.type === "text" ? p.text.length : 0), 0)
          : contentText(m.content).length;
    const text = request.purpose === "compaction" ? SUMMARY : ANSWER(++this.answered);
    if (request.purpose !== "compaction")
      this.sizes.push({ messages: request.messages.length, chars });
    const quarter = Math.ceil(text.length / 4);
    for (let i = 0; i < text.length; i += quarter) {
      await Promise.resolve();
      yield { type: "text", delta: text.slice(i, i + quarter) };
    }
    yield {
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: Math.ceil(chars / 4), outputTokens: Math.ceil(text.length / 4) },
    };
  }
}

interface Window {
  fromTurn: number;
  toTurn: number;
  medianMs: number;
  meanMs: number;
  cpuUsPerTurn: number;
  maxRequestMessages: number;
  maxRequestChars: number;
}

interface Side {
  side: "compacted" | "uncompacted";
  turns: number;
  seconds: number;
  windows: Window[];
  compactions: { afterTurn: number; ms: number; status: string }[];
  entries: number;
  bytesOnDisk: number;
}

async function runSide(side: Side["side"], path: string, turns: number): Promise<Side> {
  const model = new LongChatModel();
  const harness = await Harness.open(await openSqliteStorage(path), {
    model,
    instructions: "You read logs with the user.",
  });
  const root = await harness.root();
  const windows: Window[] = [];
  const compactions: Side["compactions"] = [];
  const started = performance.now();
  let times: number[] = [];
  let cpuAtWindow = process.cpuUsage();
  let sizesAt = 0;
  try {
    for (let turn = 1; turn <= turns; turn++) {
      const t0 = performance.now();
      const settled = await (await root.submit({ type: "input", content: QUESTION(turn) })).wait();
      times.push(performance.now() - t0);
      if (settled.status !== "done")
        throw new Error(`${side}: turn ${turn} settled ${JSON.stringify(settled)}`);
      if (turn % EVERY === 0) {
        const cpu = process.cpuUsage(cpuAtWindow);
        const sizes = model.sizes.slice(sizesAt);
        windows.push({
          fromTurn: turn - EVERY + 1,
          toTurn: turn,
          medianMs: median(times),
          meanMs: times.reduce((a, b) => a + b, 0) / times.length,
          cpuUsPerTurn: (cpu.user + cpu.system) / times.length,
          maxRequestMessages: Math.max(...sizes.map((s) => s.messages)),
          maxRequestChars: Math.max(...sizes.map((s) => s.chars)),
        });
        times = [];
        sizesAt = model.sizes.length;
        if (side === "compacted" && turn < turns) {
          const c0 = performance.now();
          const result = await root.compact({ keepLastTurns: KEEP });
          compactions.push({ afterTurn: turn, ms: performance.now() - c0, status: result.status });
          if (result.status !== "compacted")
            throw new Error(`compaction after turn ${turn}: ${JSON.stringify(result)}`);
        }
        cpuAtWindow = process.cpuUsage();
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const entries = (await root.entries()).length;
    return { side, turns, seconds, windows, compactions, entries, bytesOnDisk: 0 };
  } finally {
    await harness.close();
  }
}

const scratch = new Scratch();
try {
  const sides: Side[] = [];
  for (const side of ["compacted", "uncompacted"] as const) {
    const path = scratch.path(`${side}.sqlite`);
    const result = await runSide(side, path, side === "compacted" ? TURNS : UNCOMPACTED_TURNS);
    result.bytesOnDisk = bytesOnDisk(path) + bytesOnDisk(`${path}-wal`);
    sides.push(result);
  }
  const header = `A ${int(TURNS)}-turn conversation on SQLite, compacted every ${EVERY} turns (keeping ${KEEP}), next to ${int(UNCOMPACTED_TURNS)} turns never compacted${smoke ? " (SMOKE: figures meaningless)" : ""}; node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
  const table = textTable(
    [
      "side / turns",
      "median ms/turn",
      "mean ms/turn",
      "CPU µs/turn",
      "max request msgs",
      "max request chars",
    ],
    sides.flatMap((s) =>
      s.windows.map((w) => [
        `${s.side} / ${w.fromTurn}-${w.toTurn}`,
        ms(w.medianMs),
        ms(w.meanMs),
        int(w.cpuUsPerTurn),
        int(w.maxRequestMessages),
        int(w.maxRequestChars),
      ]),
    ),
  );
  console.log(`${header}\n${table}`);
  for (const s of sides)
    console.log(
      `${s.side}: ${s.seconds.toFixed(1)} s, ${int(s.entries)} entries, ${int(s.bytesOnDisk / 1024)} KiB on disk${
        s.compactions.length > 0
          ? `, ${s.compactions.length} compactions (median ${ms(median(s.compactions.map((c) => c.ms)))} ms)`
          : ""
      }`,
    );
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, "agent-compaction.json"),
    JSON.stringify(
      { smoke, turns: TURNS, every: EVERY, keepLastTurns: KEEP, load: loadavg(), sides },
      null,
      2,
    ) + "\n",
  );
} finally {
  scratch.dispose();
}
