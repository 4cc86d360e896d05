import type { ConversationId } from "../domain/ids.js";
import { jsonEqual } from "../domain/json.js";
import type { Op } from "../domain/ops.js";
import type { EntryRecord } from "../domain/records.js";
import type { Cursor } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { ListenerErrorHandler } from "../session/watches.js";
import { AgentDoc, type AgentState } from "./agent.js";
import { FrameQueue } from "./frame-queue.js";
import { InboxDoc, type InboxState } from "./inbox.js";
import { LiveDoc, type LiveState } from "./live.js";
import { checkKeys, described } from "../domain/option-keys.js";
import { emptyReport, UsageDoc, usageReport, type UsageReport } from "./usage.js";

/** What a watcher sees of a conversation: its transcript, what runs now, what waits. */
export interface ConversationView {
  readonly conversationId: ConversationId;
  /** The visible transcript (a fork's includes its parent's entries up to the fork point), ascending. */
  readonly entries: readonly EntryRecord[];
  readonly live: Readonly<LiveState>;
  readonly inbox: Readonly<InboxState>;
  /** The conversation's agent configuration (`durably.agent`; `{}`: everything follows the harness). */
  readonly agent: Readonly<AgentState>;
  /** The conversation's model calls, tokens and cost, in total and per model (from `durably.usage`). */
  readonly usage: Readonly<UsageReport>;
}

/**
 * How a frame's view differs from the previous frame's: `full` for the
 * first frame and after a slow listener's frames collapsed; otherwise the
 * entries appended and the ops applied to `live`, `inbox` and `agent`
 * (`usage` has no ops: a frame whose only change is usage has empty lists,
 * and the view holds the new totals).
 */
export type ViewOps =
  | { readonly type: "full" }
  | {
      readonly type: "change";
      readonly entries: readonly EntryRecord[];
      readonly live: readonly Op[];
      readonly inbox: readonly Op[];
      readonly agent: readonly Op[];
    };

/** Return a promise to get the next frame only after it settles (frames queue meanwhile, bounded). */
export type ViewListener = (view: ConversationView, ops: ViewOps) => void | Promise<void>;

export interface WatchOptions {
  /** Frames kept for a slow listener before they collapse into one full-view frame (default 100). */
  maxFrames?: number;
}

type Frame = { view: ConversationView; ops: ViewOps };
type Change = { entries: EntryRecord[]; live: Op[]; inbox: Op[]; agent: Op[] };

const PAGE = 256;

/**
 * One `conversation.watch` subscription: registers for document changes and
 * stored commits first, loads the current view, then emits one frame per
 * burst of changes (changes published together, e.g. a commit's entries and
 * its document ops, share a frame).
 */
export class ConversationWatch {
  private entries: EntryRecord[] = [];
  private readonly seen = new Set<number>();
  private live: LiveState | undefined;
  private inbox: InboxState | undefined;
  private agent: AgentState | undefined;
  private usage: UsageReport | undefined;
  private loaded = false;
  private stopped = false;
  private pending: Change | undefined;
  private readonly queue: FrameQueue<Frame>;
  private readonly disposers: (() => void)[] = [];

  constructor(
    private readonly session: Session,
    private readonly conversationId: ConversationId,
    listener: ViewListener,
    onError: ListenerErrorHandler,
    options: WatchOptions = {},
  ) {
    const { maxFrames = 100 } = checkKeys(options, ["maxFrames"], "watch") as WatchOptions;
    if (!Number.isSafeInteger(maxFrames) || maxFrames < 1)
      throw new TypeError(
        `watch: maxFrames must be a positive integer, got ${described(maxFrames)}`,
      );
    this.queue = new FrameQueue<Frame>(
      (frame) => listener(frame.view, frame.ops),
      () => ({ view: this.view(), ops: { type: "full" } }),
      (error) => onError(error, "conversation watcher"),
      maxFrames,
    );
    this.disposers.push(
      session.watchDoc(LiveDoc, conversationId, (value, ops) => {
        this.live = value ?? LiveDoc.initial();
        this.change().live.push(...ops);
      }),
      session.watchDoc(InboxDoc, conversationId, (value, ops) => {
        this.inbox = value ?? InboxDoc.initial();
        this.change().inbox.push(...ops);
      }),
      session.watchDoc(AgentDoc, conversationId, (value, ops) => {
        this.agent = value ?? AgentDoc.initial();
        this.change().agent.push(...ops);
      }),
      session.watchDoc(UsageDoc, null, (value) => {
        // The ledger is the session's: only this conversation's part makes a frame.
        const mine = usageReport(value, conversationId);
        if (this.usage && jsonEqual(this.usage, mine)) return;
        this.usage = mine;
        this.change();
      }),
      session.subscribeCommits((event) => {
        for (const write of event.writes) {
          if (write.type !== "entry" || write.value.conversationId !== conversationId) continue;
          if (this.seen.has(write.value.id)) continue;
          this.seen.add(write.value.id);
          this.entries = [...this.entries, write.value];
          this.change().entries.push(write.value);
        }
      }),
    );
    void this.load().catch((error: unknown) => {
      this.stop();
      onError(error, "conversation watcher (loading the view)");
    });
  }

  private view(): ConversationView {
    return {
      conversationId: this.conversationId,
      entries: this.entries,
      live: this.live ?? LiveDoc.initial(),
      inbox: this.inbox ?? InboxDoc.initial(),
      agent: this.agent ?? AgentDoc.initial(),
      usage: this.usage ?? emptyReport(),
    };
  }

  private change(): Change {
    if (!this.pending) {
      this.pending = { entries: [], live: [], inbox: [], agent: [] };
      queueMicrotask(() => this.emit());
    }
    return this.pending;
  }

  private emit(): void {
    const change = this.pending;
    this.pending = undefined;
    if (!change || !this.loaded || this.stopped) return;
    this.queue.push({ view: this.view(), ops: { type: "change", ...change } });
  }

  private async load(): Promise<void> {
    const loaded: EntryRecord[] = [];
    let cursor: Cursor | undefined;
    do {
      const page = await this.session.read.scanEntries(
        { conversationId: this.conversationId, order: "ascending" },
        PAGE,
        cursor,
      );
      loaded.push(...page.items);
      cursor = page.next;
    } while (cursor !== undefined);
    const [live, inbox, agent, usage] = await Promise.all([
      this.session.snapshot(LiveDoc, this.conversationId),
      this.session.snapshot(InboxDoc, this.conversationId),
      this.session.snapshot(AgentDoc, this.conversationId),
      this.session.snapshot(UsageDoc, null),
    ]);
    if (this.stopped) return;
    // A change published during the load is newer than the snapshot: keep it.
    this.live ??= live ?? LiveDoc.initial();
    this.inbox ??= inbox ?? InboxDoc.initial();
    this.agent ??= agent ?? AgentDoc.initial();
    this.usage ??= usageReport(usage, this.conversationId);
    const loadedIds = new Set(loaded.map((e) => e.id as number));
    const late = this.entries.filter((e) => !loadedIds.has(e.id));
    for (const id of loadedIds) this.seen.add(id);
    this.entries = [...loaded, ...late].sort((a, b) => a.id - b.id);
    this.pending = undefined; // the first frame is the full view, changes so far included
    this.loaded = true;
    this.queue.push({ view: this.view(), ops: { type: "full" } });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue.close();
    for (const dispose of this.disposers) {
      try {
        dispose();
      } catch {
        // the session already closed: its watchers are gone anyway
      }
    }
  }
}
