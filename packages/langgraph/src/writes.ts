import type { RunnableConfig } from "@langchain/core/runnables";
import { WRITES_IDX_MAP, type PendingWrite } from "@langchain/langgraph-checkpoint";
import { writesTarget } from "./config.js";
import type { SaverContext } from "./context.js";
import { ThreadDoc, WritesDoc, asConversation, type StoredWrite } from "./documents.js";
import { CheckpointConfigError } from "./errors.js";
import { ensureNamespace } from "./namespaces.js";
import { ownValue } from "./own-keys.js";
import { encodeTyped } from "./typed-value.js";

/** Code point order (as LangGraph sorts task paths and ids), not UTF-16 unit order. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as string).codePointAt(0)! - (y[i] as string).codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** LangGraph's replay order of a superstep's writes: task path, task id, index. */
export function compareWrites(
  a: { path: string; task: string; idx: number },
  b: { path: string; task: string; idx: number },
): number {
  return compareText(a.path, b.path) || compareText(a.task, b.task) || a.idx - b.idx;
}

/**
 * `putWrites`: one commit adds the task's writes to the checkpoint's
 * pending-write document, kept in replay order. A regular write already
 * stored for (task, index) is kept (a retried task does not overwrite what
 * the first attempt stored); special writes (errors, interrupts, resumes:
 * negative indexes) replace, as in LangGraph's own savers.
 */
export async function putCheckpointWrites(
  ctx: SaverContext,
  config: RunnableConfig,
  writes: PendingWrite[],
  taskId: string,
  taskPath?: string,
): Promise<void> {
  const target = writesTarget(config);
  if (typeof taskId !== "string")
    throw new CheckpointConfigError(`putWrites: taskId must be a string, got ${typeof taskId}`);
  if (taskPath !== undefined && typeof taskPath !== "string")
    throw new CheckpointConfigError(`putWrites: taskPath must be a string, got ${typeof taskPath}`);
  if (!Array.isArray(writes))
    throw new CheckpointConfigError("putWrites: writes must be an array of [channel, value]");
  const path = taskPath ?? "";
  const records: StoredWrite[] = await Promise.all(
    writes.map(async (write, i) => {
      const channel = write?.[0];
      if (typeof channel !== "string")
        throw new CheckpointConfigError(`putWrites: writes[${i}][0] must be a channel name`);
      const idx = ownValue(WRITES_IDX_MAP, channel) ?? i;
      return { task: taskId, path, idx, channel, value: await encodeTyped(ctx.serde, write[1]) };
    }),
  );
  if (records.length === 0) return;
  const session = await ctx.session();
  await session.commit(async (tx) => {
    const thread = await tx.doc(ThreadDoc, null, target.threadId, undefined);
    const conversationId = await ensureNamespace(tx, thread, target);
    const doc = await tx.doc(
      WritesDoc,
      asConversation(conversationId),
      target.checkpointId,
      undefined,
    );
    const stored = doc.writes;
    for (const record of records) {
      const at = stored.findIndex((w) => w.task === record.task && w.idx === record.idx);
      if (at !== -1) {
        if (record.idx >= 0) continue;
        stored.splice(at, 1);
      }
      let pos = stored.length;
      while (pos > 0 && compareWrites(stored[pos - 1] as StoredWrite, record) > 0) pos--;
      stored.splice(pos, 0, record);
    }
  });
}
