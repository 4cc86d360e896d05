import type { CommitEvent, Session, StorageWrite } from "@durably/core";

/** Every stored batch of a session, as storage received it (Durably's public commit feed). */
export function recordCommits(session: Session): { events: CommitEvent[]; stop: () => void } {
  const events: CommitEvent[] = [];
  const stop = session.subscribeCommits((event) => events.push(event));
  return { events, stop };
}

/** The id of the channel document `channel`, from its creation write. */
export function channelDocId(events: readonly CommitEvent[], channel: string): number {
  for (const event of events)
    for (const write of event.writes)
      if (
        write.type === "document.create" &&
        write.record.kind === "langgraph.channel" &&
        write.record.key === channel
      )
        return write.record.id;
  throw new Error(`no channel document "${channel}" was created`);
}

export type ChangeWrite = Extract<StorageWrite, { type: "document.change" }>;

/** The changes to document `id`, in commit order. */
export function changesOf(events: readonly CommitEvent[], id: number): ChangeWrite[] {
  return events.flatMap((e) =>
    e.writes.filter((w): w is ChangeWrite => w.type === "document.change" && w.id === id),
  );
}

/** Batches that stored a checkpoint entry (one per put). */
export function putBatches(events: readonly CommitEvent[]): CommitEvent[] {
  return events.filter((e) =>
    e.writes.some((w) => w.type === "entry" && w.value.kind === "langgraph.checkpoint"),
  );
}

/**
 * What a delta of a channel document did to its list (kept in pages): items
 * removed and items appended, from its splice ops on `value.pages`.
 */
export function listEdits(change: ChangeWrite): { removed: number; appended: number } {
  if (change.content.kind !== "delta") throw new Error("not a delta");
  let removed = 0;
  let appended = 0;
  for (const op of change.content.ops) {
    if (op[0] !== "p" || op[1][0] !== "value" || op[1][1] !== "pages") continue;
    const [, path, , removeCount, items] = op;
    if (path.length === 3) {
      removed += removeCount;
      appended += items.length;
    } else {
      if (removeCount > 0) throw new Error("whole pages removed: count them from the base");
      appended += (items as unknown[][]).reduce((n, page) => n + page.length, 0);
    }
  }
  return { removed, appended };
}
