import type {
  RunResult,
  SqliteDatabase,
  SqliteStatements,
  SqlParams,
  TransactionOptions,
} from "../src/index.js";

/**
 * A `SqliteDatabase` decorator that records every statement the storage
 * runs (with its parameters) on its way to the real driver. It goes through
 * the port, so the storage under test is unchanged.
 */
export class RecordingDatabase implements SqliteDatabase {
  readonly statements: { sql: string; params: SqlParams }[] = [];
  readonly inner: SqliteDatabase;

  constructor(inner: SqliteDatabase) {
    this.inner = inner;
  }

  #note(sql: string, params: SqlParams | undefined): void {
    this.statements.push({ sql, params: params ?? [] });
  }

  exec(sql: string): Promise<void> {
    this.#note(sql, []);
    return this.inner.exec(sql);
  }
  run(sql: string, params?: SqlParams): Promise<RunResult> {
    this.#note(sql, params);
    return this.inner.run(sql, params);
  }
  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined> {
    this.#note(sql, params);
    return this.inner.get<Row>(sql, params);
  }
  all<Row>(sql: string, params?: SqlParams): Promise<Row[]> {
    this.#note(sql, params);
    return this.inner.all<Row>(sql, params);
  }
  transaction<T>(work: (db: SqliteStatements) => T, options?: TransactionOptions): Promise<T> {
    return this.inner.transaction((db) => {
      const recorded: SqliteStatements = {
        run: (sql, params) => (this.#note(sql, params), db.run(sql, params)),
        get: <Row>(sql: string, params?: SqlParams) => (
          this.#note(sql, params),
          db.get<Row>(sql, params)
        ),
        all: <Row>(sql: string, params?: SqlParams) => (
          this.#note(sql, params),
          db.all<Row>(sql, params)
        ),
      };
      return work(recorded);
    }, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
