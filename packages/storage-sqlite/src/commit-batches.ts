import {
  applyOps,
  InvalidOp,
  StorageRequestError,
  type BatchRefused,
  type Json,
} from "@durably/core";
import { refuse, type BatchProblem } from "@durably/core/storage";
import { columnText, rowCrc } from "./checksums.js";
import {
  CurrentValues,
  isLiveRow,
  newestAtAddress,
  readDocumentRow,
  readDocumentRows,
  type DocumentValue,
} from "./documents.js";
import { problemAt, type PlannedBatch, type PlannedWrite } from "./plan-batch.js";
import type { DocumentRow, RowReader } from "./rows.js";
import type { SqliteStatements } from "./sqlite-database.js";

const INSERT_CONVERSATION =
  "INSERT INTO conversations (id, owner_task_id, record, crc) VALUES (?, ?, ?, ?)";
const CONVERSATION_EXISTS = "SELECT 1 AS found FROM conversations WHERE id = ?";
const INSERT_ENTRY =
  "INSERT INTO entries (id, conversation_id, commit_seq, head, record, crc) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING";
const UPSERT_TASK = `INSERT INTO tasks (id, conversation_id, kind, status, abort_requested, background, owner, record, crc)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, kind = excluded.kind,
    status = excluded.status, abort_requested = excluded.abort_requested, background = excluded.background,
    owner = excluded.owner, record = excluded.record, crc = excluded.crc`;
const UPSERT_SUBMISSION = `INSERT INTO submissions (id, conversation_id, status, request_id, record, crc) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, status = excluded.status,
    request_id = excluded.request_id, record = excluded.record, crc = excluded.crc`;
const DOCUMENT_EXISTS = "SELECT 1 AS found FROM documents WHERE id = ?";
const INSERT_DOCUMENT = `INSERT INTO documents (id, kind, key, scope, rewindable, created_at, retired_at, version, base_seq, record, crc, state_crc)
  VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)`;
const INSERT_REVISION =
  "INSERT INTO document_revisions (document_id, seq, kind, content, version, crc) VALUES (?, ?, ?, ?, ?, ?)";
const SET_BASE = "UPDATE documents SET version = ?, base_seq = ?, state_crc = ? WHERE id = ?";
const RECLAIM_BEFORE = "DELETE FROM document_revisions WHERE document_id = ? AND seq < ?";
const RETIRE = "UPDATE documents SET retired_at = ?, state_crc = ? WHERE id = ?";
const RECLAIM_ALL = "DELETE FROM document_revisions WHERE document_id = ?";
const SET_NEXT_SEQ = "UPDATE metadata SET value = ?, crc = ? WHERE name = 'next_seq'";
const SET_HIGH_WATER = "UPDATE ids SET high_water = ?, crc = ? WHERE namespace = 'global'";
/** How far past the highest used id the stored high-water mark is set, so it is rewritten about once per this many ids. */
export const ID_RESERVATION = 1024;

/** Thrown inside the transaction when the first batch is refused, so the driver rolls everything back. */
class FirstBatchRefused extends Error {
  constructor(readonly refused: BatchRefused) {
    super(refused.message);
  }
}

export interface Counters {
  nextSeq: number;
  /** The high-water mark already on disk. */
  persistedHighWater: number;
  /** Max of the persisted mark and every id minted by this instance. */
  highWater: number;
}

export interface CallOutcome {
  seqs: number[];
  refused?: BatchRefused;
  nextSeq: number;
  /** Highest id minted or written so far. */
  highWater: number;
  /** The high-water mark now on disk (at least `highWater`). */
  persistedHighWater: number;
  /** Current values written by the stored batches (`null`: retired), to adopt once the transaction committed. */
  values: Map<number, DocumentValue | null>;
  /** Conversations known to exist after this call (stored by it, or found stored). */
  conversations: Set<number>;
}

/** Conversation ids known to be stored. Conversations are immutable and never deleted, so a hit stays true. */
interface Conversations {
  committed: ReadonlySet<number>;
  call: Set<number>;
  batch: Set<number>;
}

/**
 * Applies the planned batches of one `commit` call inside one
 * `BEGIN IMMEDIATE … COMMIT`. Each batch is checked write by write right
 * before it is written, so checks see earlier batches and earlier writes of
 * the same batch. A refused batch is undone (a savepoint, or the whole
 * transaction when it is the first) and stops the call; counters are
 * written once, at the end.
 */
export function commitPlanned(
  db: SqliteStatements,
  rows: RowReader,
  plans: readonly PlannedBatch[],
  counters: Counters,
  committedValues: CurrentValues,
  committedConversations: ReadonlySet<number>,
): CallOutcome {
  const values = new Map<number, DocumentValue | null>();
  const conversations: Conversations = {
    committed: committedConversations,
    call: new Set(),
    batch: new Set(),
  };
  const seqs: number[] = [];
  let seq = counters.nextSeq;
  let highWater = counters.highWater;
  let refused: BatchRefused | undefined;
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i] as PlannedBatch;
    if ("problem" in plan) {
      refused = refuse(i, plan.problem);
      break;
    }
    const savepoint = i > 0;
    if (savepoint) db.run("SAVEPOINT durably_batch");
    const batchValues = new Map<number, DocumentValue | null>();
    const state = (id: number) => knownState(id, batchValues, values, committedValues);
    const problem = applyBatch(db, rows, plan, seq, state, batchValues, conversations);
    if (problem !== undefined) {
      conversations.batch.clear();
      if (!savepoint) throw new FirstBatchRefused(refuse(i, problem));
      db.run("ROLLBACK TO durably_batch");
      db.run("RELEASE durably_batch");
      refused = refuse(i, problem);
      break;
    }
    if (savepoint) db.run("RELEASE durably_batch");
    for (const [id, value] of batchValues) values.set(id, value);
    for (const id of conversations.batch) conversations.call.add(id);
    conversations.batch.clear();
    seqs.push(seq);
    seq += 1;
    if (plan.highestId > highWater) highWater = plan.highestId;
  }
  let persistedHighWater = counters.persistedHighWater;
  if (seqs.length > 0) {
    db.run(SET_NEXT_SEQ, [seq, rowCrc("", columnText.counter("next_seq", seq))]);
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
    seqs,
    ...(refused ? { refused } : {}),
    nextSeq: seq,
    highWater,
    persistedHighWater,
    values,
    conversations: conversations.call,
  };
}

/** Unwraps the first-batch refusal thrown out of a rolled-back transaction. */
export function firstBatchRefusal(error: unknown): BatchRefused | undefined {
  return error instanceof FirstBatchRefused ? error.refused : undefined;
}

/** What a write needs to know about a live document, from the overlays or the committed cache. */
type Overlay = ReadonlyMap<number, DocumentValue | null>;

function knownState(
  id: number,
  batch: Overlay,
  call: Overlay,
  committed: CurrentValues,
): DocumentValue | null | undefined {
  // `null` means retired earlier in this call: it must not fall through to the committed cache.
  if (batch.has(id)) return batch.get(id);
  if (call.has(id)) return call.get(id);
  return committed.get(id);
}

function applyBatch(
  db: SqliteStatements,
  rows: RowReader,
  plan: { writes: PlannedWrite[] },
  seq: number,
  state: (id: number) => DocumentValue | null | undefined,
  batchValues: Map<number, DocumentValue | null>,
  conversations: Conversations,
): BatchProblem | undefined {
  const conversationExists = (id: number) => {
    if (
      conversations.committed.has(id) ||
      conversations.call.has(id) ||
      conversations.batch.has(id)
    )
      return true;
    if (db.get(CONVERSATION_EXISTS, [id]) === undefined) return false;
    conversations.batch.add(id);
    return true;
  };
  // The live value of a document: from the overlays and cache, else materialised from its rows.
  const current = (id: number, row: DocumentRow): DocumentValue =>
    state(id) ?? { ...readDocumentRows(db, rows, row, "current"), rewindable: row.rewindable };
  const retires: { index: number; id: number }[] = [];
  for (const w of plan.writes) {
    switch (w.type) {
      case "conversation":
        if (conversationExists(w.id))
          return problemAt(w.index, "immutable-record", `conversation ${w.id} is already stored`);
        if (w.parentId !== undefined && !conversationExists(w.parentId))
          return problemAt(
            w.index,
            "unknown-conversation",
            `conversation ${w.id} forks from unknown conversation ${w.parentId}`,
          );
        db.run(INSERT_CONVERSATION, w.params);
        conversations.batch.add(w.id);
        break;
      case "entry":
        if (!conversationExists(w.conversationId))
          return problemAt(
            w.index,
            "unknown-conversation",
            `entry ${w.id} names unknown conversation ${w.conversationId}`,
          );
        {
          const crc = rowCrc(w.json, columnText.entry(w.id, seq));
          const params = [w.id, w.conversationId, seq, w.head, w.json, crc];
          if (db.run(INSERT_ENTRY, params).changes === 0)
            return problemAt(w.index, "immutable-record", `entry ${w.id} is already stored`);
        }
        break;
      case "task":
      case "submission":
        if (!conversationExists(w.conversationId))
          return problemAt(
            w.index,
            "unknown-conversation",
            `${w.type} ${w.id} names unknown conversation ${w.conversationId}`,
          );
        db.run(w.type === "task" ? UPSERT_TASK : UPSERT_SUBMISSION, w.params);
        break;
      case "document.new": {
        if (db.get(DOCUMENT_EXISTS, [w.id]) !== undefined)
          return problemAt(w.index, "duplicate-id", `document ${w.id} already exists`);
        const occupant = newestAtAddress(db, rows, w.kind, w.scope, w.key)?.row;
        if (occupant !== undefined && occupant.retired_at === null) {
          const key = w.key === null ? "no key" : `key ${JSON.stringify(w.key)}`;
          return problemAt(
            w.index,
            "address-occupied",
            `document ${w.id}: address (kind ${JSON.stringify(w.kind)}, scope ${w.scope}, ${key}) already has live document ${occupant.id}`,
          );
        }
        let base: { version: number; value: Json; json: string };
        if (w.source.kind === "base") base = w.source;
        else {
          const source = copySource(db, rows, w.source.id, w.source.at, seq - 1, current);
          if (typeof source === "string")
            return problemAt(w.index, "unknown-document", `document ${w.id} copy: ${source}`);
          const json = JSON.stringify(source.value);
          base = { version: source.version, value: source.value, json };
        }
        const fixed = columnText.document(w.id, w.rewindable, seq);
        db.run(INSERT_DOCUMENT, [
          w.id,
          w.kind,
          w.key,
          w.scope,
          w.rewindable,
          seq,
          base.version,
          seq,
          w.recordJson,
          rowCrc(w.recordJson, fixed),
          stateCrc(w.id, base.version, seq, null),
        ]);
        insertRevision(db, w.id, seq, "base", base.json, base.version);
        batchValues.set(w.id, {
          version: base.version,
          value: base.value,
          deltasSinceBase: 0,
          rewindable: w.rewindable,
        });
        break;
      }
      case "document.change": {
        // A cached (or earlier written) state means the document exists and is live: no lookup.
        let before = state(w.id);
        if (before == null) {
          const row = readDocumentRow(db, rows, w.id);
          if (row === undefined)
            return problemAt(w.index, "unknown-document", `document ${w.id} does not exist`);
          if (row.retired_at !== null || before === null)
            return problemAt(
              w.index,
              "retired-document",
              `document ${w.id} was retired at seq ${row.retired_at ?? seq}`,
            );
          before =
            w.content.kind === "delta"
              ? current(w.id, row)
              : {
                  version: row.version,
                  value: null,
                  deltasSinceBase: 0,
                  rewindable: row.rewindable,
                };
        }
        const content = w.content;
        if (content.kind === "base") {
          insertRevision(db, w.id, seq, "base", w.json, content.version);
          db.run(SET_BASE, [
            content.version,
            seq,
            stateCrc(w.id, content.version, seq, null),
            w.id,
          ]);
          // Current-only: nothing before the newest base can be read again, so reclaim it now.
          if (before.rewindable === 0) db.run(RECLAIM_BEFORE, [w.id, seq]);
          batchValues.set(w.id, {
            version: content.version,
            value: content.value,
            deltasSinceBase: 0,
            rewindable: before.rewindable,
          });
          break;
        }
        if (content.version !== before.version)
          return problemAt(
            w.index,
            "version-crossing",
            `document ${w.id}: a delta for version ${content.version} on version ${before.version} (a version change needs a base)`,
          );
        let value: Json;
        try {
          value = applyOps(before.value, content.ops);
        } catch (error) {
          if (!(error instanceof InvalidOp)) throw error;
          // Storing it would leave a document that can never be read again.
          return problemAt(
            w.index,
            "invalid-write",
            `document ${w.id} delta does not apply to its current value: ${error.message}`,
          );
        }
        insertRevision(db, w.id, seq, "delta", w.json, content.version);
        batchValues.set(w.id, {
          version: content.version,
          value,
          deltasSinceBase: before.deltasSinceBase + 1,
          rewindable: before.rewindable,
        });
        break;
      }
      case "document.retire":
        retires.push(w);
        break;
    }
  }
  // Retirement takes effect after every content write of the batch.
  const retired = new Set<number>();
  for (const w of retires) {
    const row = readDocumentRow(db, rows, w.id);
    if (row === undefined)
      return problemAt(w.index, "unknown-document", `document ${w.id} does not exist`);
    if (row.retired_at !== null)
      return problemAt(
        w.index,
        "retired-document",
        `document ${w.id} was retired at seq ${row.retired_at}`,
      );
    if (retired.has(w.id))
      return problemAt(
        w.index,
        "retired-document",
        `document ${w.id} is retired twice in one batch`,
      );
    retired.add(w.id);
    db.run(RETIRE, [seq, stateCrc(w.id, row.version, row.base_seq, seq), w.id]);
    if (row.rewindable === 0) db.run(RECLAIM_ALL, [w.id]);
    batchValues.set(w.id, null);
  }
  return undefined;
}

/** The copy source's value, or a string saying why it cannot be copied. */
function copySource(
  db: SqliteStatements,
  rows: RowReader,
  id: number,
  at: number | "current",
  lastSeq: number,
  current: (id: number, row: DocumentRow) => DocumentValue,
): { version: number; value: Json } | string {
  const row = readDocumentRow(db, rows, id);
  if (row === undefined) return `source document ${id} does not exist`;
  if (at !== "current" && at > lastSeq)
    return `source seq ${at} is not committed yet (newest seq is ${lastSeq})`;
  if (!isLiveRow(row, at))
    return `source document ${id} is not live at ${at === "current" ? "current" : `seq ${at}`}`;
  if (at === "current") return current(id, row);
  try {
    return readDocumentRows(db, rows, row, at);
  } catch (error) {
    if (error instanceof StorageRequestError)
      return `source document ${id} at seq ${at}: ${error.message}`;
    throw error;
  }
}

function insertRevision(
  db: SqliteStatements,
  documentId: number,
  seq: number,
  kind: "base" | "delta",
  json: string,
  version: number,
): void {
  const crc = rowCrc(json, columnText.revision(documentId, seq, kind, version));
  db.run(INSERT_REVISION, [documentId, seq, kind, json, version, crc]);
}

/** The checksum of a document row's changing part. */
function stateCrc(id: number, version: number, baseSeq: number, retiredAt: number | null): number {
  return rowCrc("", columnText.documentState(id, version, baseSeq, retiredAt));
}
