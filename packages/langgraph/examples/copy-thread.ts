import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";

/**
 * Copies every checkpoint of one thread (all namespaces) from any LangGraph
 * checkpointer into another, oldest first, with parents and pending writes,
 * e.g. from SqliteSaver into DurablyCheckpointSaver when switching.
 */
export async function copyThread(
  from: BaseCheckpointSaver,
  to: BaseCheckpointSaver,
  threadId: string,
): Promise<number> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of from.list({ configurable: { thread_id: threadId } }))
    tuples.push(tuple);
  const byId = new Map(tuples.map((t) => [t.checkpoint.id, t]));
  for (const tuple of tuples.reverse()) {
    const { checkpoint, metadata, parentConfig, pendingWrites = [] } = tuple;
    const ns = (tuple.config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parentId = parentConfig?.configurable?.checkpoint_id as string | undefined;
    const parent = parentId !== undefined ? byId.get(parentId)?.checkpoint : undefined;
    // Every channel whose version differs from the parent's is new in this checkpoint.
    const newVersions = Object.fromEntries(
      Object.entries(checkpoint.channel_versions).filter(
        ([channel, version]) => parent?.channel_versions[channel] !== version,
      ),
    );
    const config = {
      configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parentId },
    };
    const stored = await to.put(
      config,
      checkpoint,
      metadata ?? { source: "loop", step: -1, parents: {} },
      newVersions,
    );
    const byTask = new Map<string, [string, unknown][]>();
    for (const [task, channel, value] of pendingWrites)
      byTask.set(task, [...(byTask.get(task) ?? []), [channel, value]]);
    for (const [task, writes] of byTask) await to.putWrites(stored, writes, task);
  }
  return tuples.length;
}
