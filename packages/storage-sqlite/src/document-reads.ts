import { cloneJson, type DocumentAddress, type DocumentRecord } from "@durably/core";
import {
  isHistoryKept,
  scopeKey,
  type DocumentFilter,
  type DocumentSnapshot,
  type IdRange,
  type KnownDocuments,
} from "@durably/core/storage";
import { typedDriverError, type Place } from "./driver-errors.js";
import {
  isLiveRow,
  newestAtAddress,
  readDocumentRow,
  readRevisionRows,
  revisionsWhere,
  rowState,
} from "./documents.js";
import { pageAfter } from "./record-reads.js";
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
  readonly #values: KnownDocuments;

  constructor(db: SqliteDatabase, rows: RowReader, values: KnownDocuments) {
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
    at: number | "current",
  ): Promise<DocumentRecord | undefined> {
    const scope = scopeKey(address.scope);
    const key = address.key ?? null;
    const { kind } = address;
    try {
      return await this.#db.transaction(
        (db) => {
          if (at === "current") {
            const newest = newestAtAddress(db, this.#rows, kind, scope, key);
            return newest === undefined || newest.row.retired_at !== null
              ? undefined
              : newest.record;
          }
          const found = db.get<DocumentRow>(ADDRESS_AT, [kind, scope, key, at]);
          if (found === undefined) return undefined;
          return this.#rows.documentAt(found, kind, scope, key).record;
        },
        { readOnly: true },
      );
    } catch (error) {
      throw this.#typed(error, "finding a document", { table: "documents" });
    }
  }

  /** The row, and the current value (cached) or the revision rows a read at `at` needs, in one read. */
  async document(id: number, at: number | "current"): Promise<DocumentSnapshot | undefined> {
    try {
      return await this.#db.transaction(
        (db) => {
          const row = readDocumentRow(db, this.#rows, id);
          if (row === undefined) return undefined;
          const record = this.#rows.verifiedDocument(row);
          const snapshot = { record, newestBaseSeq: row.base_seq };
          if (!isLiveRow(row, at)) return snapshot;
          const cached = at === "current" ? this.#values.get(id) : undefined;
          // Reads hand out what they return (`freshReads`): the cached value stays private.
          if (cached !== undefined) {
            const value = { ...cached.current, value: cloneJson(cached.current.value) };
            return { ...snapshot, value };
          }
          // History that is not kept: the front refuses the read from the record alone (its rows are gone).
          if (at !== "current" && !isHistoryKept(rowState(row), at)) return snapshot;
          const revisions = readRevisionRows(db, this.#rows, row, at);
          return { ...snapshot, revisions, where: revisionsWhere(this.#rows) };
        },
        { readOnly: true },
      );
    } catch (error) {
      throw this.#typed(error, "reading a document", { table: "documents", key: id });
    }
  }

  async scanDocuments(filter: DocumentFilter, range: IdRange): Promise<DocumentRecord[]> {
    const scope = scopeKey(filter.scope);
    const { at, kind } = filter;
    const page = pageAfter(range);
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
    terms.push(...page.terms);
    params.push(...page.params, range.limit);
    const sql = `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE ${terms.join(" AND ")} ORDER BY id ${page.dir} LIMIT ?`;
    try {
      const rows = await this.#db.all<DocumentRow>(sql, params);
      return rows.map((r) =>
        this.#rows.found(
          "documents",
          r.id,
          this.#rows.document(r),
          (d) => scopeKey(d.scope) === scope && (kind === undefined || d.kind === kind),
          `scanDocuments(${JSON.stringify(filter)})`,
        ),
      );
    } catch (error) {
      throw this.#typed(error, "scanning documents", { table: "documents" });
    }
  }
}
