import {
  scopeKey,
  type BatchPlan,
  type CommitCall,
  type KnownDocuments,
  type WriteConflict,
} from "@durably/core/storage";
import { columnText, rowCrc } from "./checksums.js";
import { insertRevision, retire, setBase, stateCrc } from "./document-writes.js";
import { readDocumentRow } from "./documents.js";
import type { EncodedCall, EncodedWrite } from "./encode-writes.js";
import { EntryLinks } from "./entry-links.js";
import type { RowReader } from "./rows.js";
import type { SqliteStatements, SqlValue } from "./sqlite-database.js";
import { SqliteView } from "./sqlite-view.js";
import type { Tip } from "./entry-chain.js";
import { writeTips, type TipWrite } from "./tips.js";

const INSERT_CONVERSATION =
  "INSERT INTO conversations (id, owner_task_id, record, crc) VALUES (?, ?, ?, ?)";
const INSERT_ENTRY =
  "INSERT INTO entries (id, conversation_id, commit_seq, head, prev, prev_head, record, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";
const UPSERT_TASK = `INSERT INTO tasks (id, conversation_id, kind, status, abort_requested, background, owner, record, crc)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, kind = excluded.kind,
    status = excluded.status, abort_requested = excluded.abort_requested, background = excluded.background,
    owner = excluded.owner, record = excluded.record, crc = excluded.crc`;
const UPSERT_SUBMISSION = `INSERT INTO submissions (id, conversation_id, status, request_id, record, crc) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, status = excluded.status,
    request_id = excluded.request_id, record = excluded.record, crc = excluded.crc`;
const INSERT_DOCUMENT = `INSERT INTO documents (id, kind, key, scope, rewindable, created_at, retired_at, version, base_seq, record, crc, state_crc)
  VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)`;
const RECLAIM_BEFORE = "DELETE FROM document_revisions WHERE document_id = ? AND seq < ?";
const RECLAIM_ALL = "DELETE FROM document_revisions WHERE document_id = ?";
const SET_HIGH_WATER = "UPDATE ids SET high_water = ?, crc = ? WHERE namespace = 'global'";
/** How far past the highest used id the stored high-water mark is set, so it is rewritten about once per this many ids. */
export const ID_RESERVATION = 1024;

export interface Counters {
  nextSeq: number;
  /** The high-water mark already on disk. */
  persistedHighWater: number;
  /** Max of the persisted mark and every id minted by this instance. */
  highWater: number;
}

/** The caches of committed state a call reads and, once committed, extends. */
export interface Known {
  conversations: Set<number>;
  documents: KnownDocuments;
  /**
   * Conversations' tips (newest entry and head) as committed: read and
   * verified from `tips` once, then kept as this storage writes them
   * (it alone writes the file while it owns it). Cleared when a call fails.
   */
  tips: Map<number, Tip>;
}

export interface CallOutcome {
  plans: readonly BatchPlan[];
  stored: number;
  conflict?: WriteConflict;
  counters: Counters;
  /** The planner's view, holding the document states it answered. */
  view: SqliteView;
  /** The conversations' tips as the call leaves them: read from the file or moved by its batches. */
  tips: ReadonlyMap<number, Tip>;
}

/**
 * Thrown inside the transaction when a batch conflicts, so the driver rolls
 * everything back. A later batch's conflict is rare (a caller reusing an
 * entry id): rather than a savepoint around every batch, the call is rolled
 * back and written again without that batch and the ones after it
 * (`applyPlanned`), from the same plans.
 */
class BatchConflict extends Error {
  constructor(
    readonly conflict: WriteConflict,
    readonly plans: readonly BatchPlan[],
    readonly view: SqliteView,
  ) {
    super(`batch ${conflict.batchIndex} write ${conflict.writeIndex}: ${conflict.kind}`);
  }
}

/** Unwraps the first-batch conflict thrown out of a rolled-back transaction. */
export function firstBatchConflict(error: unknown): WriteConflict | undefined {
  return error instanceof BatchConflict && error.conflict.batchIndex === 0
    ? error.conflict
    : undefined;
}

/** A planned call to write: its plans, the view they were planned on, and the batch to stop at, if any. */
export interface PlannedCall {
  plans: readonly BatchPlan[];
  view: SqliteView;
  conflict: WriteConflict | undefined;
}

/** Unwraps a later batch's conflict thrown out of a rolled-back transaction: the call to write again. */
export function laterBatchConflict(error: unknown): PlannedCall | undefined {
  return error instanceof BatchConflict && error.conflict.batchIndex > 0 ? error : undefined;
}

/**
 * One `commit` call inside one `BEGIN IMMEDIATE … COMMIT`: plans every batch
 * against the committed state, then writes the plans in order. A batch whose
 * writes meet a stored entry id (or could not be encoded) stops the call:
 * an unencodable one is known before any write; a conflict met while
 * writing rolls the whole transaction back (`BatchConflict`), and the
 * caller writes the batches before it again (`applyPlanned`). The counters
 * are written once, at the end.
 */
export function applyCall(
  db: SqliteStatements,
  rows: RowReader,
  call: CommitCall,
  encoded: EncodedCall,
  counters: Counters,
  known: Known,
): CallOutcome {
  const view = new SqliteView(db, rows, counters.nextSeq - 1, known.conversations, known.documents);
  const plans = call.plan(view, counters.nextSeq);
  const conflict =
    encoded.unstorable !== undefined && encoded.unstorable.batchIndex < plans.length
      ? encoded.unstorable
      : undefined;
  if (conflict?.batchIndex === 0) throw new BatchConflict(conflict, plans, view);
  return applyPlanned(db, rows, { plans, view, conflict }, encoded, counters, known);
}

/**
 * Writes the planned batches before `conflict`'s (all of them without
 * one), then the call's tips and counters. Throws `BatchConflict` when a
 * write meets a stored entry id: with `conflict` given (the call written
 * again), none can, since the same writes were stored before that batch.
 */
export function applyPlanned(
  db: SqliteStatements,
  rows: RowReader,
  call: PlannedCall,
  encoded: EncodedCall,
  counters: Counters,
  known: Known,
): CallOutcome {
  const { plans, view, conflict } = call;
  const limit = conflict?.batchIndex ?? plans.length;
  const chains: Chains = {
    links: new EntryLinks(db, rows, known.tips),
    revisions: new Map(),
    view,
  };
  let highWater = counters.highWater;
  for (let stored = 0; stored < limit; stored++) {
    const plan = plans[stored] as BatchPlan;
    const writeIndex = applyPlan(db, rows, plan, encoded.batches[stored] as EncodedWrite[], chains);
    if (writeIndex !== undefined)
      throw new BatchConflict(
        { batchIndex: stored, writeIndex, kind: "entry-exists" },
        plans,
        view,
      );
    if (plan.highestId > highWater) highWater = plan.highestId;
  }
  let persistedHighWater = counters.persistedHighWater;
  const nextSeq = counters.nextSeq + limit;
  if (limit > 0) {
    // Every chain end the call moved, and the seq counter, in one write (a few statements).
    const tips: TipWrite[] = [{ id: 0, chain: "seq", newest: nextSeq, newestHead: 0 }];
    chains.links.tipWrites(tips);
    for (const [id, ends] of chains.revisions)
      tips.push({ id, chain: "revisions", newest: ends.lastSeq, newestHead: 0 });
    writeTips(db, tips);
    if (highWater > persistedHighWater) {
      // Reserve ahead, so most commits leave the ids page alone (one page less to write).
      // A reopen skips the unused reserved ids, which is allowed: ids only have to be fresh.
      persistedHighWater = highWater + ID_RESERVATION;
      db.run(SET_HIGH_WATER, [
        persistedHighWater,
        rowCrc("", columnText.counter("global", persistedHighWater)),
      ]);
    }
  }
  return {
    plans,
    stored: limit,
    ...(conflict ? { conflict } : {}),
    counters: { nextSeq, persistedHighWater, highWater },
    view,
    tips: chains.links.tips(),
  };
}

/**
 * The integrity chains a call extends (README "Chains"): entries link to the
 * entry and head before them in their conversation, revisions to the
 * document's revision before them.
 */
interface Chains {
  links: EntryLinks;
  /** Newest base and newest revision of each document the call's batches wrote. */
  revisions: Map<number, RevisionEnds>;
  view: SqliteView;
}

interface RevisionEnds {
  baseSeq: number;
  lastSeq: number;
}

/**
 * A document's newest base and revision before this write: the call's
 * own, else the stored ones. The call's tips reach the file
 * only at its end; nothing reads them back from the file before that (the
 * call is planned before any write).
 */
function revisionsOf(chains: Chains, id: number): RevisionEnds {
  return chains.revisions.get(id) ?? chains.view.revisionTip(id);
}

/** Writes one planned batch; returns the index of a write whose entry id is already stored. */
function applyPlan(
  db: SqliteStatements,
  rows: RowReader,
  plan: BatchPlan,
  encoded: readonly EncodedWrite[],
  chains: Chains,
): number | undefined {
  const seq = plan.seq;
  for (const w of plan.writes) {
    const e = encoded[w.index] as EncodedWrite;
    switch (w.type) {
      case "conversation":
        db.run(INSERT_CONVERSATION, (e as Extract<EncodedWrite, { params: SqlValue[] }>).params);
        break;
      case "entry": {
        const { json, head } = e as Extract<EncodedWrite, { type: "entry" }>;
        const { id, conversationId } = w.value;
        const link = chains.links.link(id, conversationId, head === 1);
        if (link === "duplicate") return w.index;
        const crc = rowCrc(json, columnText.entry(id, seq, link.prev, link.prevHead));
        const params = [id, conversationId, seq, head, link.prev, link.prevHead, json, crc];
        if (db.run(INSERT_ENTRY, params).changes === 0) return w.index;
        chains.links.appended(id, conversationId, head === 1);
        break;
      }
      case "task":
      case "submission":
        db.run(
          w.type === "task" ? UPSERT_TASK : UPSERT_SUBMISSION,
          (e as Extract<EncodedWrite, { params: SqlValue[] }>).params,
        );
        break;
      case "document.create": {
        const { record, content } = w;
        const { recordJson, content: json } = e as Extract<EncodedWrite, { type: "document.new" }>;
        const rewindable = w.currentOnly ? 0 : 1;
        const fixed = columnText.document(record.id, rewindable, seq);
        db.run(INSERT_DOCUMENT, [
          record.id,
          record.kind,
          record.key ?? null,
          scopeKey(record.scope),
          rewindable,
          seq,
          content.version,
          seq,
          recordJson,
          rowCrc(recordJson, fixed),
          stateCrc(record.id, content.version, seq, null),
        ]);
        // A copy's value is known only once planned: serialise it now.
        insertRevision(
          db,
          record.id,
          seq,
          "base",
          json ?? JSON.stringify(content.value),
          content.version,
          0,
        );
        chains.revisions.set(record.id, { baseSeq: seq, lastSeq: seq });
        break;
      }
      case "document.change": {
        const { json } = e as Extract<EncodedWrite, { type: "document.change" }>;
        const { id, content } = w;
        const before = revisionsOf(chains, id);
        insertRevision(db, id, seq, content.kind, json, content.version, before.lastSeq);
        if (content.kind === "base") {
          setBase(db, id, content.version, seq);
          // Current-only: nothing before the newest base can be read again, so reclaim it now.
          if (w.currentOnly) db.run(RECLAIM_BEFORE, [id, seq]);
          chains.revisions.set(id, { baseSeq: seq, lastSeq: seq });
        } else chains.revisions.set(id, { baseSeq: before.baseSeq, lastSeq: seq });
        break;
      }
      case "document.retire": {
        // Read after this batch's content writes: the row has the version and base they left.
        const row = readDocumentRow(db, rows, w.id);
        if (row === undefined) throw new Error(`document ${w.id} vanished inside the transaction`);
        retire(db, row, seq);
        if (w.currentOnly) db.run(RECLAIM_ALL, [w.id]);
        break;
      }
    }
  }
  return undefined;
}
