import type { Conversation, ConversationView } from "@durably/core";
import type { PanelReader } from "./panel/section.js";
import type { SseStream } from "./sse.js";
import { itemView, liveView, usageView } from "./view-model.js";

export interface StreamPacing {
  /** Least time between two view events to one client (frames in between are merged). */
  frameMs: number;
  /** Least time between two storage panel reads for one client. */
  panelMs: number;
}

export const DEFAULT_STREAM_PACING: StreamPacing = { frameMs: 40, panelMs: 300 };

/**
 * Streams one conversation to one client: a `snapshot` event (every item,
 * the live state, the conversation's usage totals), then `change` events
 * (new items, the live state and the usage when they changed), and `storage` events (the panel, re-read after each stored
 * batch). Frames arriving faster than `frameMs`, or while the client's
 * socket is still full, are merged: the client always gets the newest
 * state and every entry exactly once. Returns the disposer.
 */
export function streamConversation(
  sse: SseStream,
  conversation: Conversation,
  subscribeStored: (listener: () => void) => () => void,
  panel: PanelReader,
  pacing: StreamPacing = DEFAULT_STREAM_PACING,
  onError: (error: unknown) => void = () => undefined,
): () => void {
  let latest: ConversationView | undefined;
  let dirty = false;
  let snapshotSent = false;
  let sentEntries = 0;
  let lastEntryId: number | undefined;
  let lastLive = "";
  let lastUsage = "";
  let lastPanel = "";
  let frameTimer: ReturnType<typeof setTimeout> | undefined;
  let panelTimer: ReturnType<typeof setTimeout> | undefined;
  let lastFrameAt = 0;
  let lastPanelAt = 0;
  let sending = false;
  let stopped = false;

  const flushFrame = async (): Promise<void> => {
    frameTimer = undefined;
    if (stopped || !latest || !dirty || sending) return;
    sending = true;
    try {
      await sse.drained();
      const view = latest;
      dirty = false;
      lastFrameAt = Date.now();
      const live = liveView(view);
      const liveJson = JSON.stringify(live);
      const usage = usageView(view.usage);
      const usageJson = JSON.stringify(usage);
      const aligned =
        snapshotSent && (sentEntries === 0 || view.entries[sentEntries - 1]?.id === lastEntryId);
      if (!aligned) {
        sse.send("snapshot", {
          conversationId: view.conversationId,
          items: view.entries.map(itemView),
          live,
          usage,
        });
        snapshotSent = true;
      } else {
        const fresh = view.entries.slice(sentEntries);
        if (fresh.length > 0 || liveJson !== lastLive || usageJson !== lastUsage)
          sse.send("change", {
            items: fresh.map(itemView),
            ...(liveJson !== lastLive ? { live } : {}),
            ...(usageJson !== lastUsage ? { usage } : {}),
          });
      }
      sentEntries = view.entries.length;
      lastEntryId = view.entries[sentEntries - 1]?.id;
      lastLive = liveJson;
      lastUsage = usageJson;
    } finally {
      sending = false;
    }
    if (dirty) scheduleFrame();
  };

  const scheduleFrame = (): void => {
    if (stopped || frameTimer !== undefined || sending) return;
    const wait = Math.max(0, lastFrameAt + pacing.frameMs - Date.now());
    frameTimer = setTimeout(() => void flushFrame().catch(onError), wait);
  };

  const flushPanel = async (): Promise<void> => {
    panelTimer = undefined;
    if (stopped) return;
    lastPanelAt = Date.now();
    const read = await panel.read(conversation.id);
    const json = JSON.stringify(read);
    if (json === lastPanel || stopped) return;
    lastPanel = json;
    await sse.drained();
    sse.send("storage", read);
  };

  const schedulePanel = (): void => {
    if (stopped || panelTimer !== undefined) return;
    const wait = Math.max(0, lastPanelAt + pacing.panelMs - Date.now());
    panelTimer = setTimeout(
      () =>
        void flushPanel().catch((error: unknown) => {
          if (!stopped) sse.send("storage-error", { message: String(error) });
          onError(error);
        }),
      wait,
    );
  };

  const stopWatch = conversation.watch((view) => {
    latest = view;
    dirty = true;
    scheduleFrame();
  });
  const stopStored = subscribeStored(schedulePanel);
  schedulePanel();

  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    stopWatch();
    stopStored();
    if (frameTimer !== undefined) clearTimeout(frameTimer);
    if (panelTimer !== undefined) clearTimeout(panelTimer);
  };
  sse.onClose(stop);
  return stop;
}
