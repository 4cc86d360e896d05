import type { Batch, CallOptions, CommitResult, Seq, Storage } from "@durably/core";

type Reads = Exclude<keyof Storage, "commit" | "close" | "capabilities">;

/**
 * A Storage that closes the real one and opens the same file again after
 * every commit, so every later read and commit starts from what is on disk.
 * Whatever the storage keeps only in memory (the next seq, the id counter,
 * the known conversations, the document value cache) is rebuilt from the
 * file each time; a counter that was never written shows up at once.
 */
export class ReopeningStorage implements Storage {
  readonly capabilities = { persistent: true };
  reopens = 0;
  #inner: Storage;
  readonly #open: () => Promise<Storage>;
  /** Commits run one at a time, each followed by its reopen. */
  #line: Promise<unknown> = Promise.resolve();
  /** Reads and mints wait for a reopen in progress. */
  #reopening: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(inner: Storage, open: () => Promise<Storage>) {
    this.#inner = inner;
    this.#open = open;
  }

  static async open(open: () => Promise<Storage>): Promise<ReopeningStorage> {
    return new ReopeningStorage(await open(), open);
  }

  commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    // The real commit copies its input before returning; this one may wait in line first.
    let copied: readonly Batch[] = batches;
    try {
      copied = structuredClone(batches);
    } catch {
      // Not cloneable (a function, a symbol): the real storage must refuse it, so pass it on as it is.
    }
    const run = async (): Promise<CommitResult> => {
      await this.#reopening;
      try {
        return await this.#inner.commit(copied, receive, options);
      } finally {
        if (!this.#closed) await this.#reopen();
      }
    };
    const next = this.#line.then(run, run);
    this.#line = next.catch(() => undefined);
    return next;
  }

  async #reopen(): Promise<void> {
    let done!: () => void;
    this.#reopening = new Promise((resolve) => (done = resolve));
    try {
      await this.#inner.close();
      this.#inner = await this.#open();
      this.reopens++;
    } finally {
      done();
    }
  }

  async #call<K extends Reads>(
    name: K,
    args: Parameters<Storage[K]>,
  ): Promise<Awaited<ReturnType<Storage[K]>>> {
    await this.#reopening;
    const method = this.#inner[name] as (...a: Parameters<Storage[K]>) => Promise<unknown>;
    return (await method.apply(this.#inner, args)) as Awaited<ReturnType<Storage[K]>>;
  }

  mintId(options?: CallOptions) {
    return this.#call("mintId", [options]);
  }
  conversation(...args: Parameters<Storage["conversation"]>) {
    return this.#call("conversation", args);
  }
  scanConversations(...args: Parameters<Storage["scanConversations"]>) {
    return this.#call("scanConversations", args);
  }
  entry(...args: Parameters<Storage["entry"]>) {
    return this.#call("entry", args);
  }
  latestHead(...args: Parameters<Storage["latestHead"]>) {
    return this.#call("latestHead", args);
  }
  scanEntries(...args: Parameters<Storage["scanEntries"]>) {
    return this.#call("scanEntries", args);
  }
  task(...args: Parameters<Storage["task"]>) {
    return this.#call("task", args);
  }
  scanTasks(...args: Parameters<Storage["scanTasks"]>) {
    return this.#call("scanTasks", args);
  }
  submission(...args: Parameters<Storage["submission"]>) {
    return this.#call("submission", args);
  }
  scanSubmissions(...args: Parameters<Storage["scanSubmissions"]>) {
    return this.#call("scanSubmissions", args);
  }
  submissionByRequest(...args: Parameters<Storage["submissionByRequest"]>) {
    return this.#call("submissionByRequest", args);
  }
  findDocument(...args: Parameters<Storage["findDocument"]>) {
    return this.#call("findDocument", args);
  }
  document(...args: Parameters<Storage["document"]>) {
    return this.#call("document", args);
  }
  scanDocuments(...args: Parameters<Storage["scanDocuments"]>) {
    return this.#call("scanDocuments", args);
  }

  /** Closes the current instance at once, as the real close does, and stops reopening. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#reopening;
    await this.#inner.close();
    await this.#line;
    await this.#inner.close();
  }
}
