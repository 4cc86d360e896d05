import type { DocumentAddress } from "@durably/core";
import {
  scopeKey,
  type CurrentValue,
  type KnownDocuments,
  type PlanDocument,
  type PlanView,
} from "@durably/core/storage";
import { newestAtAddress, readDocumentRow, rowState, valueFromRows } from "./documents.js";
import type { DocumentRow, RowReader } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";
import { newestRevision } from "./tips.js";

const CONVERSATION_EXISTS = "SELECT 1 AS found FROM conversations WHERE id = ?";

/**
 * What the planner asks, answered inside the commit transaction before any
 * of the call's writes: committed state, from the caches of known
 * conversations and documents or from the rows. Entry ids are answered
 * optimistically: the insert of a stored id changes nothing, and the apply
 * step reports it (`entry-exists`), sparing a lookup per entry.
 */
export class SqliteView implements PlanView {
  /** Document rows read while planning, so a later question about the same document reads none. */
  readonly #rows = new Map<number, DocumentRow | null>();
  /** Every document state this view answered, for adopting the call's changes afterwards. */
  readonly answered = new Map<number, PlanDocument>();

  constructor(
    private readonly db: SqliteStatements,
    private readonly rows: RowReader,
    readonly lastSeq: number,
    private readonly conversations: Set<number>,
    private readonly documents: KnownDocuments,
  ) {}

  hasConversation(id: number): boolean {
    if (this.conversations.has(id)) return true;
    if (this.db.get(CONVERSATION_EXISTS, [id]) === undefined) return false;
    // Committed (nothing of this call is written yet), and conversations are never deleted.
    this.conversations.add(id);
    return true;
  }

  hasEntry(): boolean {
    return false;
  }

  #row(id: number): DocumentRow | undefined {
    let row = this.#rows.get(id);
    if (row === undefined)
      this.#rows.set(id, (row = readDocumentRow(this.db, this.rows, id) ?? null));
    return row ?? undefined;
  }

  document(id: number): PlanDocument | undefined {
    let doc: PlanDocument | undefined = this.documents.get(id);
    if (doc === undefined) {
      const row = this.#row(id);
      if (row === undefined) return undefined;
      doc = rowState(row);
    }
    this.answered.set(id, doc);
    return doc;
  }

  current(id: number): CurrentValue {
    return (
      this.documents.get(id)?.current ??
      valueFromRows(this.db, this.rows, this.#row(id) as DocumentRow, "current")
    );
  }

  /**
   * The newest base and newest revision of a document stored before this
   * call (asked only of documents the planner found), for linking the next
   * revision to it without reading the row again when the document is known.
   */
  revisionTip(id: number): { baseSeq: number; lastSeq: number } {
    const known = this.documents.get(id);
    if (known !== undefined) return { baseSeq: known.newestBaseSeq, lastSeq: known.lastSeq };
    const row = this.#row(id) as DocumentRow;
    return { baseSeq: row.base_seq, lastSeq: newestRevision(this.db, this.rows, id) };
  }

  liveAt(address: DocumentAddress): number | undefined {
    const { kind, scope, key } = address;
    const newest = newestAtAddress(this.db, this.rows, kind, scopeKey(scope), key ?? null)?.row;
    return newest !== undefined && newest.retired_at === null ? newest.id : undefined;
  }

  valueAt(id: number, at: number): CurrentValue {
    return valueFromRows(this.db, this.rows, this.#row(id) as DocumentRow, at);
  }
}
