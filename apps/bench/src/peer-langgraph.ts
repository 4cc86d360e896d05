import { execFile } from "node:child_process";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import type { RunnableConfig } from "@langchain/core/runnables";
import { uuid6, type Checkpoint, type CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { GrowingChildReport } from "./growing-child.js";
import { concurrentLoops, type CommitCase } from "./harness.js";
import type { Scratch } from "./paths.js";
import { ratio } from "./stats.js";
import { stepData } from "./workload.js";

const execFileAsync = promisify(execFile);

/*
 * The peer: LangGraph's SQLite checkpointer, `SqliteSaver.put()` called the way
 * the Pregel loop calls it after each step (one checkpoint per step, chained by
 * parent id, one thread per writer). Its connection runs WAL with
 * `synchronous = NORMAL`, Durably's SQLite default, so both pay the same
 * durability. LangGraph's default messages channel stores the whole list in
 * every checkpoint; its beta DeltaChannel is not measured here.
 */

export function checkpointOf(n: number, values: Record<string, unknown>): Checkpoint {
  const versions: Record<string, number> = {};
  for (const key of Object.keys(values)) versions[key] = n;
  return {
    v: 4,
    id: uuid6(-1),
    ts: new Date().toISOString(),
    channel_values: values,
    channel_versions: versions,
    versions_seen: {},
  };
}

export const metadataOf = (n: number): CheckpointMetadata => ({
  source: "loop",
  step: n,
  parents: {},
});

export function openSaver(path: string): SqliteSaver {
  const db = new Database(path);
  db.pragma("synchronous = NORMAL");
  return new SqliteSaver(db);
}

/** `SqliteSaver.put()` of a fixed small state per step: the same step data Durably commits. */
export function langgraphCase(writers: number, scratch: Scratch): CommitCase {
  return {
    id: `peer/langgraph/${writers}`,
    family: "peer",
    label: `LangGraph SqliteSaver.put(), small state, ${writers} writer${writers === 1 ? "" : "s"}`,
    backend: "sqlite",
    writers,
    open() {
      const saver = openSaver(scratch.path("langgraph.sqlite"));
      const configs: RunnableConfig[] = Array.from({ length: writers }, (_, w) => ({
        configurable: { thread_id: `thread-${w}`, checkpoint_ns: "" },
      }));
      let n = 0;
      return Promise.resolve({
        run: (deadline) =>
          concurrentLoops(writers, deadline, async (w) => {
            n++;
            const values = { step: stepData(n), state: { n, note: "" } };
            configs[w] = await saver.put(
              configs[w] as RunnableConfig,
              checkpointOf(n, values),
              metadataOf(n),
            );
          }),
        close: () => void saver.db.close(),
      });
    },
  };
}

/** A chat message whose JSON is exactly `bytes` long. */
export function messageOf(step: number, bytes: number): { role: string; content: string } {
  const role = step % 2 === 0 ? "user" : "assistant";
  const empty = JSON.stringify({ role, content: "" }).length;
  const head = `message ${step}: `;
  return {
    role,
    content: (head + "lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27))).slice(
      0,
      bytes - empty,
    ),
  };
}

export interface GrowingSide {
  /** Steps/s over the last quarter of the steps. */
  lastQuarterStepsPerSecond: number;
  /** Steps/s in each quarter, first to last: flat means the cost per step does not grow. */
  quarterStepsPerSecond: number[];
  /** Database file + WAL (+ shared memory) at the end, before close. */
  bytesOnDisk: number;
  /** The same files after close (WAL checkpointed). */
  bytesAfterClose: number;
}

export interface GrowingResult {
  steps: number;
  messageBytes: number;
  durably: GrowingSide;
  langgraph: GrowingSide;
  /** Durably steps/s over LangGraph steps/s, last quarter. */
  speedup: number;
  /** Durably bytes over LangGraph bytes, at the end (file + WAL). */
  bytesRatio: number;
}

function quarters(times: number[]): number[] {
  const size = Math.max(1, Math.floor(times.length / 4));
  return [0, 1, 2, 3].map((q) => {
    const slice = times.slice(q * size, q === 3 ? times.length : (q + 1) * size);
    const ms = slice.reduce((a, b) => a + b, 0);
    return (slice.length / ms) * 1000;
  });
}

const childPath = fileURLToPath(
  new URL(`./growing-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/** Runs one side in a fresh process with this process's loader flags (tsx on sources, none on dist). */
async function runSide(
  side: "durably" | "langgraph",
  path: string,
  steps: number,
  messageBytes: number,
): Promise<GrowingChildReport> {
  const { stdout } = await execFileAsync(
    process.execPath,
    [...process.execArgv, childPath, side, path, String(steps), String(messageBytes)],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout.trim().split("\n").pop() as string) as GrowingChildReport;
}

/**
 * A conversation of `steps` steps, each adding one message: Durably appends
 * one entry (plus the state delta of the commit workload) on SQLite; LangGraph
 * puts a checkpoint holding the whole message list. Each side runs alone in
 * its own process, one after the other: timed step by step in one loop, the
 * peer's growing writes (hundreds of MB by the end) would slow Durably's
 * steps too and show a decline that is not Durably's.
 */
export async function growingConversation(
  steps: number,
  messageBytes: number,
  scratch: Scratch,
): Promise<GrowingResult> {
  const durablyRun = await runSide(
    "durably",
    scratch.path("growing-durably.sqlite"),
    steps,
    messageBytes,
  );
  const langgraphRun = await runSide(
    "langgraph",
    scratch.path("growing-langgraph.sqlite"),
    steps,
    messageBytes,
  );
  const side = (run: GrowingChildReport): GrowingSide => {
    const q = quarters(run.times);
    return {
      lastQuarterStepsPerSecond: q[3] as number,
      quarterStepsPerSecond: q,
      bytesOnDisk: run.bytesOnDisk,
      bytesAfterClose: run.bytesAfterClose,
    };
  };
  const durably = side(durablyRun);
  const langgraph = side(langgraphRun);
  return {
    steps,
    messageBytes,
    durably,
    langgraph,
    speedup: ratio(durably.lastQuarterStepsPerSecond, langgraph.lastQuarterStepsPerSecond),
    bytesRatio: ratio(durably.bytesOnDisk, langgraph.bytesOnDisk),
  };
}
