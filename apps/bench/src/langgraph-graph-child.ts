// One side of the LangGraph checkpointer benchmark, alone in its process: a
// real StateGraph (MessagesAnnotation) whose one node adds one message per
// step, looping for `steps` steps (durability "sync": each step's
// checkpoint is stored before the next step starts), on LangGraph's
// SqliteSaver, on DurablyCheckpointSaver over Durably's SQLite storage (both
// WAL with synchronous = NORMAL), or on a checkpointer that stores nothing
// (what LangGraph itself costs per step). Prints one JSON line.
//
//   node [--conditions=@durably/source --import tsx] langgraph-graph-child.{ts,js} <side> <steps> <dir> <contentChars>
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import type { RunnableConfig } from "@langchain/core/runnables";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  BaseCheckpointSaver,
  JsonPlusSerializer,
  type Checkpoint,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { DurablyCheckpointSaver } from "@durably/langgraph";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { sqliteBytes } from "./paths.js";

export type GraphSide = "nothing" | "sqlite-saver" | "durably";
/** In the order the benchmark runs them (the peer's 600 MB of writes last). */
export const GRAPH_SIDES: readonly GraphSide[] = ["nothing", "durably", "sqlite-saver"];

export interface GraphSideReport {
  side: GraphSide;
  steps: number;
  /** One message as LangGraph's serializer writes it (bytes of JSON). */
  messageBytes: number;
  /** Wall milliseconds of each step (between consecutive step updates of the stream). */
  stepMs: number[];
  /** CPU milliseconds (user + system) this process used during each step. */
  cpuMs: number[];
  /** Database file + WAL + shared memory before close, and after close. */
  bytesOnDisk: number;
  bytesAfterClose: number;
}

/** A checkpointer that stores nothing: the graph with it costs what LangGraph itself costs. */
class StoresNothing extends BaseCheckpointSaver {
  getTuple(): Promise<CheckpointTuple | undefined> {
    return Promise.resolve(undefined);
  }
  async *list(): AsyncGenerator<CheckpointTuple> {}
  put(config: RunnableConfig, checkpoint: Checkpoint): Promise<RunnableConfig> {
    return Promise.resolve({
      configurable: { ...config.configurable, checkpoint_id: checkpoint.id },
    });
  }
  putWrites(): Promise<void> {
    return Promise.resolve();
  }
  deleteThread(): Promise<void> {
    return Promise.resolve();
  }
}

function content(step: number, chars: number): string {
  const head = `message ${step}: `;
  return (head + "lorem ipsum dolor sit amet ".repeat(Math.ceil(chars / 27))).slice(0, chars);
}

export function messageOf(step: number, chars: number): HumanMessage | AIMessage {
  const fields = { content: content(step, chars) };
  return step % 2 === 0 ? new HumanMessage(fields) : new AIMessage(fields);
}

async function openSide(
  side: GraphSide,
  file: string,
): Promise<{ checkpointer: BaseCheckpointSaver; close: () => Promise<void> }> {
  if (side === "nothing")
    return { checkpointer: new StoresNothing(), close: () => Promise.resolve() };
  if (side === "sqlite-saver") {
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    return { checkpointer: new SqliteSaver(db), close: () => Promise.resolve(void db.close()) };
  }
  const saver = new DurablyCheckpointSaver(await openSqliteStorage(file));
  return { checkpointer: saver, close: () => saver.close() };
}

const cpuNow = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

export async function runSide(
  side: GraphSide,
  steps: number,
  dir: string,
  chars: number,
): Promise<GraphSideReport> {
  const file = join(dir, `${side}.sqlite`);
  const { checkpointer, close } = await openSide(side, file);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("step", (state: typeof MessagesAnnotation.State) => ({
      messages: [messageOf(state.messages.length, chars)],
    }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (state) => (state.messages.length > steps ? END : "step"), [
      "step",
      END,
    ])
    .compile({ checkpointer });
  const [, sample] = await new JsonPlusSerializer().dumpsTyped(messageOf(1, chars));
  const stepMs: number[] = [];
  const cpuMs: number[] = [];
  let wall = performance.now();
  let cpu = cpuNow();
  const stream = await graph.stream(
    { messages: [messageOf(0, chars)] },
    {
      configurable: { thread_id: "growing" },
      recursionLimit: steps + 10,
      durability: "sync",
      streamMode: "updates",
    },
  );
  for await (const _update of stream) {
    const [nowWall, nowCpu] = [performance.now(), cpuNow()];
    stepMs.push(nowWall - wall);
    cpuMs.push(nowCpu - cpu);
    [wall, cpu] = [nowWall, nowCpu];
  }
  const bytesOnDisk = side === "nothing" ? 0 : sqliteBytes(file);
  await close();
  return {
    side,
    steps: stepMs.length,
    messageBytes: sample.length,
    stepMs,
    cpuMs,
    bytesOnDisk,
    bytesAfterClose: side === "nothing" ? 0 : sqliteBytes(file),
  };
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  const [side, steps, dir, chars] = process.argv.slice(2);
  if (!GRAPH_SIDES.includes(side as GraphSide)) throw new Error(`unknown side ${side}`);
  const report = await runSide(side as GraphSide, Number(steps), dir as string, Number(chars));
  process.stdout.write(JSON.stringify(report) + "\n");
}
