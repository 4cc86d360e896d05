import Database from "better-sqlite3";
import type {
  RunResult,
  SqliteDatabase,
  SqliteStatements,
  SqlParams,
  TransactionOptions,
} from "./sqlite-database.js";

type Statement = Database.Statement<unknown[], unknown>;

/**
 * The default `SqliteDatabase` adapter. Statements are prepared once per
 * SQL text and reused; a transaction is one synchronous call, so a whole
 * `storage.commit` costs a single facade call.
 */
export class BetterSqlite3Database implements SqliteDatabase {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Statement>();
  readonly #sync: SqliteStatements;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#sync = {
      run: (sql, params) => {
        const info = this.#prepare(sql).run(...(params ?? []));
        return { changes: info.changes };
      },
      get: <Row>(sql: string, params?: SqlParams) =>
        this.#prepare(sql).get(...(params ?? [])) as Row | undefined,
      all: <Row>(sql: string, params?: SqlParams) =>
        this.#prepare(sql).all(...(params ?? [])) as Row[],
    };
  }

  /** Opens `path` with better-sqlite3 (creating the file) and wraps it. */
  static open(path: string): BetterSqlite3Database {
    return new BetterSqlite3Database(new Database(path));
  }

  #prepare(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  exec(sql: string): Promise<void> {
    this.#db.exec(sql);
    return Promise.resolve();
  }

  run(sql: string, params?: SqlParams): Promise<RunResult> {
    return Promise.resolve(this.#sync.run(sql, params));
  }

  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined> {
    return Promise.resolve(this.#sync.get<Row>(sql, params));
  }

  all<Row>(sql: string, params?: SqlParams): Promise<Row[]> {
    return Promise.resolve(this.#sync.all<Row>(sql, params));
  }

  transaction<T>(work: (db: SqliteStatements) => T, options?: TransactionOptions): Promise<T> {
    try {
      return Promise.resolve(this.transactionSync(work, options));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** The synchronous form, for callers that hold this adapter directly. */
  transactionSync<T>(work: (db: SqliteStatements) => T, options?: TransactionOptions): T {
    // A synchronous read on this connection cannot interleave with a write:
    // the storage holds the file's exclusive lock and JavaScript runs the
    // whole function before anything else.
    if (options?.readOnly) return work(this.#sync);
    this.#prepare("BEGIN IMMEDIATE").run();
    try {
      const result = work(this.#sync);
      this.#prepare("COMMIT").run();
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#prepare("ROLLBACK").run();
      throw error;
    }
  }

  close(): Promise<void> {
    this.#statements.clear();
    this.#db.close();
    return Promise.resolve();
  }
}
