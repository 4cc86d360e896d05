import type { ConversationId, EntryId, SubmissionId } from "../domain/ids.js";
import type { EntryRecord, SubmissionRecord } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { HarnessContext } from "./harness-context.js";
import { LiveDoc } from "./live.js";
import { checkKeys, described } from "../domain/option-keys.js";
import { StreamEvents, type ConversationEvent, type StreamView } from "./stream-events.js";
import { ConversationWatch, type ConversationView } from "./watch.js";

export interface StreamOptions {
  /** Ends the stream (the iterator rejects with the signal's reason). */
  signal?: AbortSignal;
  /**
   * Follow only the run answering this submission, from its start (even if
   * it began before the stream), and end after yielding `{ type: "settled" }`.
   */
  until?: { readonly id: SubmissionId } | SubmissionId;
}

/** Events waiting for the consumer before the watch is told to hold its frames (they then collapse). */
const HIGH_WATER = 1_000;

/**
 * The events of a conversation as an async iterator, built on
 * `conversation.watch`: text and tool output as they stream, tool calls and
 * results as they are stored. Without `until` it runs until the loop breaks,
 * `signal` aborts or the harness closes (then it rejects `SessionClosed`); a slow consumer never makes memory grow without bound
 * (the watch collapses its frames and the events carry on from the view).
 */
export async function* conversationStream(
  harness: HarnessContext,
  conversationId: ConversationId,
  options: StreamOptions = {},
): AsyncGenerator<ConversationEvent, void, undefined> {
  checkKeys(options, ["signal", "until"], "stream");
  const { signal } = options;
  signal?.throwIfAborted();
  const untilId = untilIdOf(options.until);
  let until: SubmissionRecord | undefined;
  if (untilId !== undefined) {
    until = await harness.session.read.submission(untilId);
    if (!until || until.conversationId !== conversationId)
      throw new TypeError(`stream: submission ${untilId} is not in conversation ${conversationId}`);
  }
  const events = new StreamEvents(until ? { id: until.id } : undefined);
  const queue: ConversationEvent[] = [];
  let wake: (() => void) | undefined;
  let drained: (() => void) | undefined;
  let failure: { error: unknown } | undefined;
  let settled: SubmissionRecord | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const take = (view: StreamView): void => {
    queue.push(...events.process(view));
    notify();
  };
  const watch = new ConversationWatch(
    harness.session,
    conversationId,
    (view: ConversationView) => {
      take(view);
      if (queue.length < HIGH_WATER) return;
      return new Promise<void>((resolve) => (drained = resolve));
    },
    (error, where) => {
      failure ??= {
        error: error instanceof Error ? error : new Error(`${where}: ${String(error)}`),
      };
      notify();
    },
  );
  const onAbort = (): void => {
    failure ??= { error: signal?.reason };
    notify();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  const onClose = (): void => {
    failure ??= { error: harness.closing.reason };
    notify();
  };
  if (harness.closing.aborted) onClose();
  else harness.closing.addEventListener("abort", onClose, { once: true });
  if (untilId !== undefined)
    void harness
      .resume()
      .then(() => harness.settled(untilId, signal ? { signal } : {}))
      .then(
        async (record) => {
          // The settling commit's frame may not have been delivered yet: take the stored view last.
          const answer =
            record.answer !== undefined
              ? await harness.session.read.entry(record.answer)
              : undefined;
          if (answer?.entry.byTaskId !== undefined) events.learnRun(answer.entry.byTaskId);
          take(await lastView(harness, conversationId, record.entry));
          settled = record;
          notify();
        },
        (error: unknown) => {
          failure ??= { error };
          notify();
        },
      );
  try {
    for (;;) {
      if (queue.length > 0) {
        const event = queue.shift() as ConversationEvent;
        if (queue.length === 0 && drained) {
          const d = drained;
          drained = undefined;
          d();
        }
        yield event;
        continue;
      }
      if (failure) throw failure.error;
      if (settled) {
        yield { type: "settled", submission: settled };
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    harness.closing.removeEventListener("abort", onClose);
    watch.stop();
    drained?.();
  }
}

/** The submission id `until` names: a submission (its `id`) or the id itself, checked. */
function untilIdOf(until: unknown): SubmissionId | undefined {
  if (until === undefined) return undefined;
  const id =
    typeof until === "object" && until !== null && !Array.isArray(until)
      ? (until as { id?: unknown }).id
      : until;
  if (Number.isSafeInteger(id) && (id as number) >= 1) return id as SubmissionId;
  throw new TypeError(
    typeof until === "object" && until !== null && !Array.isArray(until)
      ? `stream: until must be a submission or its id, got an object whose id is ${described(id)}`
      : `stream: until must be a submission or its id (a positive integer), got ${described(until)}`,
  );
}

/** The stored view from `from` on (the run's user entry): enough for the last events of a run. */
async function lastView(
  harness: HarnessContext,
  conversationId: ConversationId,
  from: EntryId | undefined,
): Promise<StreamView> {
  const { session } = harness;
  const live = (await session.snapshot(LiveDoc, conversationId)) ?? LiveDoc.initial();
  const entries: EntryRecord[] = [];
  let cursor: Cursor | undefined;
  do {
    const page = await session.read.scanEntries(
      { conversationId, order: "ascending", ...(from !== undefined ? { minEntryId: from } : {}) },
      256,
      cursor,
    );
    entries.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return { entries, live };
}
