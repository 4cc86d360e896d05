import { columnText, rowCrc } from "./checksums.js";
import { linkOf, readTip, type Chain, type LinkedRow, type Tip } from "./entry-chain.js";
import { ENTRY_COLUMNS, type RowReader } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";
import type { TipWrite } from "./tips.js";

const ANY_ENTRY = "SELECT id FROM entries WHERE conversation_id = ? ORDER BY id DESC LIMIT 1";
const ENTRY_EXISTS = "SELECT 1 AS found FROM entries WHERE id = ?";
const LAST_BELOW =
  "SELECT id FROM entries WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT 1";
const LAST_HEAD_BELOW =
  "SELECT id FROM entries WHERE conversation_id = ? AND id < ? AND head = 1 ORDER BY id DESC LIMIT 1";
const FIRST_ABOVE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? ORDER BY id LIMIT 1`;
const FIRST_HEAD_ABOVE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE conversation_id = ? AND id > ? AND head = 1 ORDER BY id LIMIT 1`;
const RELINK = "UPDATE entries SET prev = ?, prev_head = ?, crc = ? WHERE id = ?";

/** The links a new entry row carries. */
export interface Links {
  prev: number;
  prevHead: number;
}

/**
 * Links the entries one `commit` call writes into their conversations'
 * chains (see `entry-chain.ts`). Tips move in memory while the call runs
 * and are written once per conversation at the end of the call, with the
 * call's other tips and the seq counter; a call that meets a conflict is
 * rolled back whole, its moves with it. A conversation's tip comes from
 * the storage's committed tips when known, else from its `tips` row, read
 * and verified once. An entry whose id is below its conversation's newest (the
 * port allows any fresh id) is spliced in: the entry above it is relinked.
 */
export class EntryLinks {
  readonly #db: SqliteStatements;
  readonly #rows: RowReader;
  readonly #committed: ReadonlyMap<number, Tip>;
  /** Tips moved by the call's batches. */
  readonly #moved = new Map<number, Tip>();
  /** Tips read from the file by this call, each once. */
  readonly #read = new Map<number, Tip>();

  constructor(db: SqliteStatements, rows: RowReader, committed: ReadonlyMap<number, Tip>) {
    this.#db = db;
    this.#rows = rows;
    this.#committed = committed;
  }

  #tip(conversationId: number): Tip {
    const known =
      this.#moved.get(conversationId) ??
      this.#committed.get(conversationId) ??
      this.#read.get(conversationId);
    if (known !== undefined) return known;
    let stored = readTip(this.#db, this.#rows, conversationId);
    if (stored === undefined) {
      // No tip row: the conversation has no entries yet, or the row is lost.
      const any = this.#db.get<{ id: number }>(ANY_ENTRY, [conversationId]);
      if (any !== undefined)
        throw this.#rows.corrupted(
          "tips",
          `${conversationId}/entries`,
          `conversation ${conversationId} has entries (entry ${any.id}) but no tip row: the row is lost`,
        );
      stored = { lastId: 0, lastHead: 0 };
    }
    this.#read.set(conversationId, stored);
    return stored;
  }

  /**
   * The links of a new entry, or `"duplicate"` when its id is already
   * stored. Must be followed by the entry's insert and `appended`.
   */
  link(id: number, conversationId: number, head: boolean): Links | "duplicate" {
    const tip = this.#tip(conversationId);
    if (id > tip.lastId) return { prev: tip.lastId, prevHead: head ? tip.lastHead : 0 };
    // Spliced in below the newest entry: rare (the Session mints ids in commit order).
    if (this.#db.get(ENTRY_EXISTS, [id]) !== undefined) return "duplicate";
    const prev = this.#db.get<{ id: number }>(LAST_BELOW, [conversationId, id])?.id ?? 0;
    this.#relinkAbove("entries", conversationId, id, prev);
    if (!head) return { prev, prevHead: 0 };
    // With no head above it, the newest head below is the tip's.
    if (tip.lastHead < id) return { prev, prevHead: tip.lastHead };
    const prevHead = this.#db.get<{ id: number }>(LAST_HEAD_BELOW, [conversationId, id])?.id ?? 0;
    this.#relinkAbove("heads", conversationId, id, prevHead);
    return { prev, prevHead };
  }

  /** Points the first entry (or head) above `id` at `id`, after checking it pointed at `was`. */
  #relinkAbove(chain: Chain, conversationId: number, id: number, was: number): void {
    const above = this.#db.get<LinkedRow>(chain === "entries" ? FIRST_ABOVE : FIRST_HEAD_ABOVE, [
      conversationId,
      id,
    ]);
    if (above === undefined)
      throw this.#rows.corrupted(
        "entries",
        conversationId,
        `conversation ${conversationId}: its tip names a newer ${chain === "entries" ? "entry" : "head"} than ${id}, but none is found`,
      );
    this.#rows.entry(above.id, above);
    if (linkOf(above, chain) !== was)
      throw this.#rows.corrupted(
        "entries",
        linkOf(above, chain),
        `entry ${above.id} of conversation ${conversationId} links to ${linkOf(above, chain)}, but the newest ${chain === "entries" ? "entry" : "head"} below it is ${was}: the entries between are missing`,
      );
    const prev = chain === "entries" ? id : above.prev;
    const prevHead = chain === "heads" ? id : above.prev_head;
    const crc = rowCrc(above.record, columnText.entry(above.id, above.commit_seq, prev, prevHead));
    this.#db.run(RELINK, [prev, prevHead, crc, above.id]);
  }

  /** Moves the conversation's tip once the entry is stored. */
  appended(id: number, conversationId: number, head: boolean): void {
    const tip = this.#tip(conversationId);
    this.#moved.set(conversationId, {
      lastId: Math.max(tip.lastId, id),
      lastHead: head ? Math.max(tip.lastHead, id) : tip.lastHead,
    });
  }

  /** The tips the call moved, once per conversation, for the call's tip write. */
  tipWrites(into: TipWrite[]): void {
    for (const [conversationId, tip] of this.#moved)
      into.push({
        id: conversationId,
        chain: "entries",
        newest: tip.lastId,
        newestHead: tip.lastHead,
      });
  }

  /** Every tip the call read or moved, as the call leaves them: committed state once it commits. */
  tips(): ReadonlyMap<number, Tip> {
    if (this.#moved.size === 0) return this.#read;
    for (const [conversationId, tip] of this.#moved) this.#read.set(conversationId, tip);
    return this.#read;
  }
}
