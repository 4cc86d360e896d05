import Database from "better-sqlite3";
import type { RunnableConfig } from "@langchain/core/runnables";
import { uuid6, type Checkpoint, type CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Session, type ConversationId } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { concurrentLoops, type CommitCase } from "./harness.js";
import { sqliteBytes, type Scratch } from "./paths.js";
import { ratio } from "./stats.js";
import { StepState, createWriterConversations, stepData } from "./workload.js";

/*
 * The peer: LangGraph's SQLite checkpointer, `SqliteSaver.put()` called the way
 * the Pregel loop calls it after each step (one checkpoint per step, chained by
 * parent id, one thread per writer). Its connection runs WAL with
 * `synchronous = NORMAL`, Durably's SQLite default, so both pay the same
 * durability. LangGraph's default messages channel stores the whole list in
 * every checkpoint; its beta DeltaChannel is not measured here.
 */

function checkpointOf(n: number, values: Record<string, unknown>): Checkpoint {
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

const metadataOf = (n: number): CheckpointMetadata => ({ source: "loop", step: n, parents: {} });

function openSaver(path: string): SqliteSaver {
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

/**
 * A conversation of `steps` steps, each adding one message: Durably appends
 * one entry (plus the state delta of the commit workload) on SQLite; LangGraph
 * puts a checkpoint holding the whole message list. The two alternate step by
 * step so load on the machine hits both alike; each step is timed alone.
 */
export async function growingConversation(
  steps: number,
  messageBytes: number,
  scratch: Scratch,
): Promise<GrowingResult> {
  const durablyPath = scratch.path("growing-durably.sqlite");
  const langgraphPath = scratch.path("growing-langgraph.sqlite");
  const session = await Session.open(await openSqliteStorage(durablyPath));
  const saver = openSaver(langgraphPath);
  const durablyTimes: number[] = [];
  const langgraphTimes: number[] = [];
  try {
    const [conversationId] = await createWriterConversations(session, 1);
    let config: RunnableConfig = { configurable: { thread_id: "conversation", checkpoint_ns: "" } };
    const messages: { role: string; content: string }[] = [];
    for (let n = 1; n <= steps; n++) {
      const message = messageOf(n, messageBytes);
      let start = performance.now();
      await session.commit(async (tx) => {
        await tx.appendEntry(conversationId as ConversationId, { kind: "message", data: message });
        (await tx.doc(StepState, conversationId as ConversationId)).n = n;
      });
      durablyTimes.push(performance.now() - start);

      start = performance.now();
      messages.push(message);
      config = await saver.put(
        config,
        checkpointOf(n, { messages, state: { n, note: "" } }),
        metadataOf(n),
      );
      langgraphTimes.push(performance.now() - start);
    }
    const durablyBytes = sqliteBytes(durablyPath);
    const langgraphBytes = sqliteBytes(langgraphPath);
    await session.close();
    saver.db.close();
    const side = (times: number[], bytes: number, path: string): GrowingSide => {
      const q = quarters(times);
      return {
        lastQuarterStepsPerSecond: q[3] as number,
        quarterStepsPerSecond: q,
        bytesOnDisk: bytes,
        bytesAfterClose: sqliteBytes(path),
      };
    };
    const durably = side(durablyTimes, durablyBytes, durablyPath);
    const langgraph = side(langgraphTimes, langgraphBytes, langgraphPath);
    return {
      steps,
      messageBytes,
      durably,
      langgraph,
      speedup: ratio(durably.lastQuarterStepsPerSecond, langgraph.lastQuarterStepsPerSecond),
      bytesRatio: ratio(durably.bytesOnDisk, langgraph.bytesOnDisk),
    };
  } finally {
    if (saver.db.open) saver.db.close();
    await session.close();
  }
}
