import type { Batch, CallOptions, CommitResult, Seq, Storage } from "@durably/core";

type Reads = Exclude<keyof Storage, "commit" | "close" | "capabilities">;

/**
 * A Storage that closes and reopens the real one after every commit, so
 * every read and every later commit runs against state recovered from the
 * files. Used to run the conformance suites through recovery.
 */
export class ReopeningStorage implements Storage {
  readonly capabilities = { persistent: true };
  reopens = 0;
  /** Commits run one at a time, each followed by its reopen; other calls wait for a reopen in progress. */
  private line: Promise<unknown> = Promise.resolve();
  private reopening: Promise<void> = Promise.resolve();

  private constructor(
    private inner: Storage,
    private readonly open: () => Promise<Storage>,
    private readonly beforeReopen?: (storage: Storage) => Promise<unknown>,
  ) {}

  /** `beforeReopen` runs after each commit, before the reopen (a compaction, say). */
  static async open(
    open: () => Promise<Storage>,
    beforeReopen?: (storage: Storage) => Promise<unknown>,
  ): Promise<ReopeningStorage> {
    return new ReopeningStorage(await open(), open, beforeReopen);
  }

  async commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    // Copy now, as the real commit would before returning control (the call itself may wait in line).
    let copied: readonly Batch[] = batches;
    try {
      copied = structuredClone(batches);
    } catch {
      // Not cloneable (a function...): the real storage must refuse it; pass it as it is.
    }
    const run = async (): Promise<CommitResult> => {
      try {
        return await this.inner.commit(copied, receive, options);
      } finally {
        if (!this.closed) await this.reopen();
      }
    };
    const next = this.line.then(run, run);
    this.line = next.catch(() => undefined);
    return next;
  }

  private async reopen(): Promise<void> {
    let reopened!: () => void;
    this.reopening = new Promise((resolve) => (reopened = resolve));
    try {
      await this.beforeReopen?.(this.inner);
      await this.inner.close();
      this.inner = await this.open();
      this.reopens++;
    } finally {
      reopened();
    }
  }

  private async call<K extends Reads>(
    name: K,
    args: Parameters<Storage[K]>,
  ): Promise<Awaited<ReturnType<Storage[K]>>> {
    await this.reopening;
    const method = this.inner[name] as (...a: Parameters<Storage[K]>) => Promise<unknown>;
    return (await method.apply(this.inner, args)) as Awaited<ReturnType<Storage[K]>>;
  }

  mintId(options?: CallOptions) {
    return this.call("mintId", [options]);
  }
  conversation(...args: Parameters<Storage["conversation"]>) {
    return this.call("conversation", args);
  }
  scanConversations(...args: Parameters<Storage["scanConversations"]>) {
    return this.call("scanConversations", args);
  }
  entry(...args: Parameters<Storage["entry"]>) {
    return this.call("entry", args);
  }
  latestHead(...args: Parameters<Storage["latestHead"]>) {
    return this.call("latestHead", args);
  }
  scanEntries(...args: Parameters<Storage["scanEntries"]>) {
    return this.call("scanEntries", args);
  }
  task(...args: Parameters<Storage["task"]>) {
    return this.call("task", args);
  }
  scanTasks(...args: Parameters<Storage["scanTasks"]>) {
    return this.call("scanTasks", args);
  }
  submission(...args: Parameters<Storage["submission"]>) {
    return this.call("submission", args);
  }
  scanSubmissions(...args: Parameters<Storage["scanSubmissions"]>) {
    return this.call("scanSubmissions", args);
  }
  submissionByRequest(...args: Parameters<Storage["submissionByRequest"]>) {
    return this.call("submissionByRequest", args);
  }
  findDocument(...args: Parameters<Storage["findDocument"]>) {
    return this.call("findDocument", args);
  }
  document(...args: Parameters<Storage["document"]>) {
    return this.call("document", args);
  }
  scanDocuments(...args: Parameters<Storage["scanDocuments"]>) {
    return this.call("scanDocuments", args);
  }
  private closed = false;

  /** Closes the current instance at once (as the real close does), and stops reopening. */
  async close() {
    this.closed = true;
    await this.inner.close();
    await this.line;
    await this.inner.close();
  }
}
