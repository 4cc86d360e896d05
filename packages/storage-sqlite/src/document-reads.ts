import {
  cloneJson,
  StorageRequestError,
  type Cursor,
  type DocumentAddress,
  type DocumentId,
  type DocumentQuery,
  type DocumentRecord,
  type MaterializedDocument,
  type Page,
  type Seq,
} from "@durably/core";
import {
  checkAddress,
  checkAt,
  checkId,
  checkLimit,
  checkQuery,
  checkScope,
  decodeIdCursor,
  oneOfField,
  pageFromRows,
  scopeKey,
  startAfter,
} from "@durably/core/storage";
import { typedDriverError, type Place } from "./driver-errors.js";
import {
  isLiveRow,
  newestAtAddress,
  readDocumentRow,
  readDocumentRows,
  type CurrentValues,
} from "./documents.js";
import { orderSql } from "./record-reads.js";
import { DOCUMENT_COLUMNS, type DocumentRow, type RowReader } from "./rows.js";
import type { SqliteDatabase, SqlValue } from "./sqlite-database.js";

const ADDRESS_AT = `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE kind = ? AND scope = ? AND key IS ? AND created_at <= ? ORDER BY created_at DESC LIMIT 1`;

/**
 * Reads of documents: by address, materialised by id, scans. Document and
 * revision rows are verified against their checksums as they are read.
 */
export class DocumentReads {
  readonly #db: SqliteDatabase;
  readonly #rows: RowReader;
  readonly #values: CurrentValues;

  constructor(db: SqliteDatabase, rows: RowReader, values: CurrentValues) {
    this.#db = db;
    this.#rows = rows;
    this.#values = values;
  }

  /** The driver's damage and I/O errors as typed ones naming the place; checksum failures pass as they are. */
  #typed(error: unknown, action: string, place: Place): Error {
    return typedDriverError(error, this.#rows.file, action, place);
  }

  async findDocument(
    address: DocumentAddress,
    at: Seq | "current",
  ): Promise<DocumentRecord | undefined> {
    const a = checkAddress(address);
    const scope = scopeKey(a.scope);
    const when = checkAt(at);
    const key = a.key ?? null;
    try {
      return await this.#db.transaction(
        (db) => {
          if (when === "current") {
            const newest = newestAtAddress(db, this.#rows, a.kind, scope, key);
            return newest === undefined || newest.row.retired_at !== null
              ? undefined
              : newest.record;
          }
          const found = db.get<DocumentRow>(ADDRESS_AT, [a.kind, scope, key, when]);
          if (found === undefined) return undefined;
          const { row, record } = this.#rows.documentAt(found, a.kind, scope, key);
          return isLiveRow(row, when) ? record : undefined;
        },
        { readOnly: true },
      );
    } catch (error) {
      throw this.#typed(error, "finding a document", { table: "documents" });
    }
  }

  async document(id: DocumentId, at: Seq | "current"): Promise<MaterializedDocument | undefined> {
    checkId("document id", id);
    const when = checkAt(at);
    try {
      return await this.#db.transaction(
        (db) => {
          const row = readDocumentRow(db, this.#rows, id);
          if (row === undefined || !isLiveRow(row, when)) return undefined;
          const record = this.#rows.verifiedDocument(row);
          const cached = when === "current" ? this.#values.get(id) : undefined;
          if (cached !== undefined)
            return {
              record,
              version: cached.version,
              value: cloneJson(cached.value),
              deltasSinceBase: cached.deltasSinceBase,
            };
          return { record, ...readDocumentRows(db, this.#rows, row, when) };
        },
        { readOnly: true },
      );
    } catch (error) {
      throw this.#typed(error, "reading a document", { table: "documents", key: id });
    }
  }

  async scanDocuments(
    query: DocumentQuery,
    limit: number,
    cursor?: Cursor,
  ): Promise<Page<DocumentRecord>> {
    const scan = "scanDocuments";
    const order = checkQuery(scan, query, ["scope", "at", "kind"], "ascending");
    checkLimit(limit);
    if (query.scope === undefined)
      throw new StorageRequestError("bad-query", `${scan}: scope is required`);
    const scope = scopeKey(checkScope(query.scope));
    const at = checkAt(query.at);
    const kind = oneOfField<string>(scan, query, "kind", "string");
    const after = startAfter(order, decodeIdCursor(scan, query, cursor));
    const { cmp, dir } = orderSql(order);
    const terms = ["scope = ?"];
    const params: SqlValue[] = [scope];
    if (kind !== undefined) {
      terms.push("kind = ?");
      params.push(kind);
    }
    if (at === "current") terms.push("retired_at IS NULL");
    else {
      terms.push("created_at <= ?", "(retired_at IS NULL OR retired_at > ?)");
      params.push(at, at);
    }
    terms.push(`id ${cmp} ?`);
    params.push(after, limit + 1);
    const sql = `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE ${terms.join(" AND ")} ORDER BY id ${dir} LIMIT ?`;
    try {
      const rows = await this.#db.all<DocumentRow>(sql, params);
      return pageFromRows(scan, query, limit, rows, (r) =>
        this.#rows.found(
          "documents",
          r.id,
          this.#rows.document(r),
          (d) => scopeKey(d.scope) === scope && (kind === undefined || d.kind === kind),
          `scanDocuments(${JSON.stringify(query)})`,
        ),
      );
    } catch (error) {
      throw this.#typed(error, "scanning documents", { table: "documents" });
    }
  }
}
