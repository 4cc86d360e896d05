/**
 * One side of the growing conversation in a fresh process, so neither side
 * runs beside the other's garbage, page cache churn or 600 MB of writes:
 * `node growing-child.js <durably|langgraph> <path> <steps> <messageBytes>`.
 * Prints one JSON line: `{ times, bytesOnDisk, bytesAfterClose }` (`times`:
 * ms of each step, in order).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { Session, type ConversationId } from "@durably/core";
import { openSqliteStorage } from "@durably/storage-sqlite";
import { sqliteBytes } from "./paths.js";
import { checkpointOf, messageOf, metadataOf, openSaver } from "./peer-langgraph.js";
import { StepState, createWriterConversations } from "./workload.js";

export interface GrowingChildReport {
  times: number[];
  /** Database file + WAL (+ shared memory) at the end, before close. */
  bytesOnDisk: number;
  /** The same files after close (WAL checkpointed). */
  bytesAfterClose: number;
}

/** Durably: each step appends one entry (plus the state delta of the commit workload). */
async function durably(
  path: string,
  steps: number,
  messageBytes: number,
): Promise<GrowingChildReport> {
  const session = await Session.open(await openSqliteStorage(path));
  const times: number[] = [];
  let bytesOnDisk: number;
  try {
    const [conversationId] = await createWriterConversations(session, 1);
    for (let n = 1; n <= steps; n++) {
      const message = messageOf(n, messageBytes);
      const start = performance.now();
      await session.commit(async (tx) => {
        await tx.appendEntry(conversationId as ConversationId, { kind: "message", data: message });
        (await tx.doc(StepState, conversationId as ConversationId)).n = n;
      });
      times.push(performance.now() - start);
    }
    bytesOnDisk = sqliteBytes(path);
  } finally {
    await session.close();
  }
  return { times, bytesOnDisk, bytesAfterClose: sqliteBytes(path) };
}

/** LangGraph: each step puts a checkpoint holding the whole message list. */
async function langgraph(
  path: string,
  steps: number,
  messageBytes: number,
): Promise<GrowingChildReport> {
  const saver = openSaver(path);
  const times: number[] = [];
  let bytesOnDisk: number;
  try {
    let config: RunnableConfig = { configurable: { thread_id: "conversation", checkpoint_ns: "" } };
    const messages: { role: string; content: string }[] = [];
    for (let n = 1; n <= steps; n++) {
      const message = messageOf(n, messageBytes);
      const start = performance.now();
      messages.push(message);
      config = await saver.put(
        config,
        checkpointOf(n, { messages, state: { n, note: "" } }),
        metadataOf(n),
      );
      times.push(performance.now() - start);
    }
    bytesOnDisk = sqliteBytes(path);
  } finally {
    saver.db.close();
  }
  return { times, bytesOnDisk, bytesAfterClose: sqliteBytes(path) };
}

const [side, path, steps, messageBytes] = process.argv.slice(2);
if ((side !== "durably" && side !== "langgraph") || path === undefined)
  throw new TypeError("usage: growing-child <durably|langgraph> <path> <steps> <messageBytes>");
const run = side === "durably" ? durably : langgraph;
const report = await run(path, Number(steps), Number(messageBytes));
process.stdout.write(JSON.stringify(report) + "\n");
