import type {
  RunResult,
  SqliteDatabase,
  SqliteStatements,
  SqlParams,
  TransactionOptions,
} from "@durably/storage-sqlite";

/**
 * A `SqliteDatabase` facade around the real one that, once armed, stops the
 * process inside the next write transaction: after the storage's statements
 * ran, before `COMMIT`. It calls `onPaused` with the number of rows those
 * statements changed, then blocks the thread for good, so the transaction is
 * open (and uncommitted) when the parent SIGKILLs the process.
 */
export class PausingDatabase implements SqliteDatabase {
  readonly #inner: SqliteDatabase;
  readonly #onPaused: (changes: number) => void;
  #armed = false;

  constructor(inner: SqliteDatabase, onPaused: (changes: number) => void) {
    this.#inner = inner;
    this.#onPaused = onPaused;
  }

  /** The next write transaction pauses. */
  arm(): void {
    this.#armed = true;
  }

  exec(sql: string): Promise<void> {
    return this.#inner.exec(sql);
  }

  run(sql: string, params?: SqlParams): Promise<RunResult> {
    return this.#inner.run(sql, params);
  }

  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined> {
    return this.#inner.get<Row>(sql, params);
  }

  all<Row>(sql: string, params?: SqlParams): Promise<Row[]> {
    return this.#inner.all<Row>(sql, params);
  }

  transaction<T>(work: (db: SqliteStatements) => T, options?: TransactionOptions): Promise<T> {
    if (!this.#armed || options?.readOnly === true) return this.#inner.transaction(work, options);
    this.#armed = false;
    return this.#inner.transaction((db) => {
      let changes = 0;
      const counting: SqliteStatements = {
        run(sql, params) {
          const result = db.run(sql, params);
          changes += result.changes;
          return result;
        },
        get: <Row>(sql: string, params?: SqlParams) => db.get<Row>(sql, params),
        all: <Row>(sql: string, params?: SqlParams) => db.all<Row>(sql, params),
      };
      const result = work(counting);
      this.#onPaused(changes);
      parkUntilKilled();
      return result;
    }, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** How long a paused child waits for its kill before it gives up (exit code 3). */
export const PAUSE_LIMIT_MS = 60_000;

/** Parks the thread without returning and without spinning the CPU: only a signal ends it in time. */
function parkUntilKilled(): never {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  Atomics.wait(cell, 0, 0, PAUSE_LIMIT_MS);
  process.exit(3);
}
