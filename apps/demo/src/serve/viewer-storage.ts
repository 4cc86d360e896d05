import { Harness, StorageLocked, type ListenerErrorHandler } from "@durably/core";
import { CliError } from "../cli.js";
import {
  DEFAULT_PACING,
  unfinishedRuns,
  viewerHarnessOptions,
  type DemoAgentPacing,
} from "./demo-agent.js";
import { describeHolder, findLockHolder, type LockHolder } from "./lock-holder.js";
import { openTarget } from "./open-storage.js";
import type { PanelReader } from "./panel/section.js";
import { describeTarget, type Target, type TargetInfo } from "./target.js";

/** What the page is told about the storage; nothing secret (messages are scrubbed of the PostgreSQL URL). */
export type StorageStatus =
  | { state: "opening" }
  | {
      state: "open";
      /** True once this process runs harness tasks (the viewer's own scripted runs only). */
      running: boolean;
      /** Conversations with an unfinished run someone else started: the viewer does not run them. */
      othersUnfinished: number[];
    }
  | {
      state: "locked";
      message: string;
      holder: LockHolder | null;
      holderText: string;
      /** What the backend allows meanwhile, and what the viewer offers. */
      advice: string;
      /** The viewer retries until the lock is free. */
      waiting: boolean;
    }
  | { state: "failed"; message: string }
  | { state: "released" };

export interface Opened {
  harness: Harness;
  panel: PanelReader;
}

export interface ViewerStorageOptions {
  pacing?: DemoAgentPacing;
  /** Where the approval run's `save_note` tool appends (default ./durably-viewer-notes.txt). */
  notesFile?: string;
  /** How often a wait for a lock tries again. */
  retryMs?: number;
  /** A line for the terminal (the server's log). */
  log?: (line: string) => void;
  onError?: ListenerErrorHandler;
}

/** What each backend's lock allows a second process, shown with a locked status. */
const LOCK_ADVICE: Record<Target["backend"], string> = {
  memory: "",
  sqlite:
    "SQLite's exclusive lock lets no other connection read the file while its owner has it open, so nothing can be shown until it is released.",
  jsonl:
    "A JSONL storage has one owner at a time (its LOCK file); reading the files while the owner appends could show half a commit, so nothing is shown until it is released.",
  store:
    "LevelDB lets one process open a database at a time, so nothing can be shown until it is released.",
  postgres:
    "A PostgreSQL session has one owner at a time (its lease); the viewer opens it once the owner closes it or its lease expires.",
};

/**
 * The storage the viewer shows, as a small state machine: opening, open,
 * locked (another process owns it; optionally waiting until it is free),
 * failed, released (closed on request, to hand it back). Attempts never
 * overlap. The harness is opened with the demo's scripted agent, and its
 * scheduler is started only for the viewer's own runs: another app's
 * unfinished run would otherwise be continued with the wrong model.
 */
export class ViewerStorage {
  readonly info: TargetInfo;
  #status: StorageStatus = { state: "opening" };
  #opened: Opened | undefined;
  #listeners = new Set<(status: StorageStatus) => void>();
  #queue: Promise<unknown> = Promise.resolve();
  #waitTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #pacing: DemoAgentPacing;
  readonly #notesFile: string | undefined;
  readonly #retryMs: number;
  readonly #log: (line: string) => void;
  readonly #onError: ListenerErrorHandler;

  constructor(
    readonly target: Target,
    options: ViewerStorageOptions = {},
  ) {
    this.info = describeTarget(target);
    this.#pacing = options.pacing ?? DEFAULT_PACING;
    this.#notesFile = options.notesFile;
    this.#retryMs = options.retryMs ?? 1000;
    this.#log = options.log ?? (() => undefined);
    this.#onError =
      options.onError ?? ((error, where) => this.#log(`${where}: ${this.scrub(String(error))}`));
  }

  get status(): StorageStatus {
    return this.#status;
  }

  /** The open harness and panel, when the status is `open`. */
  get opened(): Opened | undefined {
    return this.#opened;
  }

  subscribe(listener: (status: StorageStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Removes the PostgreSQL URL and its password from a message meant for the page or the log. */
  scrub(text: string): string {
    if (this.target.backend !== "postgres") return text;
    let out = text.replaceAll(this.target.url, this.info.location);
    const password = URL.canParse(this.target.url) ? new URL(this.target.url).password : "";
    if (password !== "") out = out.replaceAll(password, "***");
    return out;
  }

  #set(status: StorageStatus): void {
    this.#status = status;
    for (const listener of [...this.#listeners]) listener(status);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.#queue.then(work);
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  /** One attempt to open. Rejects only with a `CliError` (no storage there) on the first attempt's caller. */
  open(): Promise<StorageStatus> {
    return this.#serial(() => this.#attempt());
  }

  async #attempt(): Promise<StorageStatus> {
    if (this.#closed || this.#opened) return this.#status;
    const waiting = this.#status.state === "locked" && this.#status.waiting;
    let opened;
    try {
      opened = await openTarget(this.target);
    } catch (error) {
      if (error instanceof StorageLocked) {
        const holder = (await findLockHolder(this.target, error).catch(() => undefined)) ?? null;
        this.#set({
          state: "locked",
          message: this.scrub(error.message),
          holder,
          holderText: describeHolder(holder ?? undefined),
          advice: LOCK_ADVICE[this.target.backend],
          waiting,
        });
      } else {
        this.#stopWaiting();
        this.#set({ state: "failed", message: this.scrub(describeError(error)) });
        if (error instanceof CliError) throw error;
      }
      return this.#status;
    }
    let harness: Harness;
    try {
      harness = await Harness.open(opened.storage, {
        ...viewerHarnessOptions(this.#pacing, this.#notesFile),
        onError: this.#onError,
      });
    } catch (error) {
      await opened.storage.close().catch(() => undefined);
      await opened.panel.close().catch(() => undefined);
      this.#stopWaiting();
      this.#set({ state: "failed", message: this.scrub(describeError(error)) });
      return this.#status;
    }
    this.#stopWaiting();
    this.#opened = { harness, panel: opened.panel };
    let running = false;
    let others: number[] = [];
    try {
      const runs = await unfinishedRuns(harness);
      others = runs.others;
      if (runs.ours.length > 0 && runs.others.length === 0) {
        await harness.resume();
        running = true;
        this.#log(
          `resumed the viewer's own unfinished run(s) in conversation(s) ${runs.ours.join(", ")}`,
        );
      }
    } catch (error) {
      // The view still works; runs stay where storage has them.
      this.#onError(error, "looking for unfinished runs");
    }
    this.#set({ state: "open", running, othersUnfinished: others });
    return this.#status;
  }

  /** Keep trying until the lock is free (or the storage fails in another way). */
  waitForLock(): void {
    if (this.#status.state !== "locked" || this.#closed) return;
    if (!this.#status.waiting) this.#set({ ...this.#status, waiting: true });
    if (this.#waitTimer !== undefined) return;
    const tick = (): void => {
      this.#waitTimer = undefined;
      void this.open()
        .catch(() => undefined)
        .then(() => {
          if (this.#status.state === "locked" && this.#status.waiting && !this.#closed)
            this.#waitTimer = setTimeout(tick, this.#retryMs);
        });
    };
    this.#waitTimer = setTimeout(tick, 0);
  }

  cancelWait(): void {
    this.#stopWaiting();
    if (this.#status.state === "locked" && this.#status.waiting)
      this.#set({ ...this.#status, waiting: false });
  }

  #stopWaiting(): void {
    if (this.#waitTimer !== undefined) clearTimeout(this.#waitTimer);
    this.#waitTimer = undefined;
  }

  /**
   * Starts the scheduler for a run the viewer just submitted. Refused while
   * someone else's run is unfinished in this storage: the scheduler would
   * continue it with the demo's scripted model.
   */
  async allowRun(): Promise<string | undefined> {
    const opened = this.#opened;
    if (!opened || this.#status.state !== "open") return "the storage is not open";
    if (this.#status.running) return undefined;
    const runs = await unfinishedRuns(opened.harness);
    if (runs.others.length > 0)
      return `conversation${runs.others.length > 1 ? "s" : ""} ${runs.others.join(", ")} ha${runs.others.length > 1 ? "ve" : "s"} an unfinished run that another program started; running the scripted agent here would start the scheduler, which would continue that run with the demo's scripted model. Finish it with the program that started it first.`;
    this.#set({ state: "open", running: true, othersUnfinished: [] });
    return undefined;
  }

  /** Closes the storage (its deferred progress is stored) so another process can open it. */
  release(): Promise<void> {
    return this.#serial(async () => {
      this.#stopWaiting();
      const opened = this.#opened;
      this.#opened = undefined;
      if (opened) {
        await opened.harness.close();
        await opened.panel.close().catch(() => undefined);
      }
      if (!this.#closed) this.#set({ state: "released" });
    });
  }

  /** Final close, for shutdown. */
  async close(): Promise<void> {
    await this.release();
    this.#closed = true;
    this.#listeners.clear();
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${error.name}${typeof code === "string" ? ` (${code})` : ""}: ${error.message}`;
  }
  return String(error);
}
