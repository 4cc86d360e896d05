import type { Batch, CallOptions, CommitResult, Seq, Storage } from "@durably/core";

type Reads = Exclude<keyof Storage, "commit" | "close" | "capabilities">;

/** A Storage that closes and reopens the one it wraps after every commit; `reopens` counts them. */
export interface ReopeningStorage extends Storage {
  /** How many times the wrapped storage has been closed and opened again. */
  readonly reopens: number;
}

/**
 * Wraps a persistent storage so that it is closed and opened again (with
 * `open`) after every commit. Every later read, mint and commit then runs
 * against the state the adapter recovers from its files or database, so
 * whatever it keeps only in memory (the next seq, the id high-water mark,
 * known conversations, cached document values) and forgot to write shows up
 * at once. Run the storage conformance suite through it as an extra pass
 * (see `persistentStorageFactory`'s `reopenAfterEveryCommit`).
 *
 * `open` must return a new instance over the same data each call; the
 * wrapper declares `capabilities.persistent`. Commits run one at a time,
 * each followed by its reopen; reads and mints wait for a reopen in
 * progress. `close` closes the current instance at once and stops reopening.
 */
export async function reopeningStorage(open: () => Promise<Storage>): Promise<ReopeningStorage> {
  return new Reopening(await open(), open);
}

class Reopening implements ReopeningStorage {
  readonly capabilities = { persistent: true };
  reopens = 0;
  #inner: Storage;
  readonly #open: () => Promise<Storage>;
  /** The last commit in line (with its reopen); the next one starts after it. */
  #line: Promise<unknown> = Promise.resolve();
  /** Settles when the reopen in progress (if any) has a new instance. */
  #reopening: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(inner: Storage, open: () => Promise<Storage>) {
    this.#inner = inner;
    this.#open = open;
  }

  commit(
    batches: readonly Batch[],
    receive: (index: number, seq: Seq) => void,
    options?: CallOptions,
  ): Promise<CommitResult> {
    // The real commit copies its input before it returns control; this call may wait in line first,
    // so copy now: a caller mutating its batches after calling must change nothing stored.
    let copied: readonly Batch[] = batches;
    try {
      copied = structuredClone(batches);
    } catch {
      // Not cloneable (a function, a symbol): the real storage must refuse it, so pass it on as it is.
    }
    const run = async (): Promise<CommitResult> => {
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

  /**
   * Closes the current instance at once, as a real close does (a commit in
   * flight may then fail with `StorageClosed`), and stops reopening; once the
   * commits in line have settled, closes whichever instance is current then.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#reopening;
    await this.#inner.close();
    await this.#line;
    await this.#inner.close();
  }
}
