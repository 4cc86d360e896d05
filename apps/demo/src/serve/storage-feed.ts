import { listConversations, type ConversationList } from "./conversation-list.js";
import { usageView, type UsageView } from "./view-model.js";
import type { SseStream } from "./sse.js";
import type { StorageStatus, ViewerStorage } from "./viewer-storage.js";

/** Least time between two reads of the conversation list. */
const LIST_MS = 400;

/**
 * The `/api/events` stream shared by every open page: the storage's status
 * whenever it changes, and the conversation list and the storage's usage
 * totals (`harness.usage()`), re-read (at most every `LIST_MS`) after
 * stored commits and each sent when it changed.
 */
export class StorageFeed {
  readonly #clients = new Set<SseStream>();
  #list: ConversationList | undefined;
  #listJson = "";
  #usage: UsageView | undefined;
  #usageJson = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastRead = 0;
  #unsubscribeCommits: (() => void) | undefined;
  readonly #unsubscribeStatus: () => void;

  constructor(
    private readonly storage: ViewerStorage,
    private readonly onError: (error: unknown) => void,
  ) {
    this.#unsubscribeStatus = storage.subscribe((status) => this.#onStatus(status));
    this.#onStatus(storage.status);
  }

  #onStatus(status: StorageStatus): void {
    this.#broadcast("status", status);
    this.#unsubscribeCommits?.();
    this.#unsubscribeCommits = undefined;
    this.#list = undefined;
    this.#listJson = "";
    this.#usage = undefined;
    this.#usageJson = "";
    const harness = this.storage.opened?.harness;
    if (status.state === "open" && harness) {
      this.#unsubscribeCommits = harness.session.subscribeCommits((event) => {
        if (!event.deferred) this.#schedule();
      });
      this.#schedule();
    }
  }

  #broadcast(event: string, data: unknown): void {
    for (const client of this.#clients) client.send(event, data);
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#clients.size === 0) return;
    const wait = Math.max(0, this.#lastRead + LIST_MS - Date.now());
    this.#timer = setTimeout(() => void this.#refresh(), wait);
  }

  async #refresh(): Promise<void> {
    this.#timer = undefined;
    const harness = this.storage.opened?.harness;
    if (!harness || this.storage.status.state !== "open") return;
    this.#lastRead = Date.now();
    try {
      const list = await listConversations(harness);
      const usage = usageView(await harness.usage());
      if (this.storage.opened?.harness !== harness) return;
      const json = JSON.stringify(list);
      if (json !== this.#listJson) {
        this.#list = list;
        this.#listJson = json;
        this.#broadcast("conversations", list);
      }
      const usageJson = JSON.stringify(usage);
      if (usageJson !== this.#usageJson) {
        this.#usage = usage;
        this.#usageJson = usageJson;
        this.#broadcast("usage", usage);
      }
    } catch (error) {
      this.onError(error);
    }
  }

  /** A new page: the status at once, the list as soon as it is read. */
  add(client: SseStream): void {
    this.#clients.add(client);
    client.onClose(() => this.#clients.delete(client));
    client.send("status", this.storage.status);
    if (this.#list) client.send("conversations", this.#list);
    if (this.#usage) client.send("usage", this.#usage);
    else if (this.storage.status.state === "open") this.#schedule();
  }

  get clients(): number {
    return this.#clients.size;
  }

  close(): void {
    this.#unsubscribeStatus();
    this.#unsubscribeCommits?.();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const client of [...this.#clients]) client.close();
  }
}
