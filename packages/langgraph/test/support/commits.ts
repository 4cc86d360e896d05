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
