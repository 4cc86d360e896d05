import { UnknownRecord } from "../domain/errors.js";
import type { DocumentId, EntryId, Seq, TaskId } from "../domain/ids.js";
import type { Json } from "../domain/json.js";
import type { Op } from "../domain/ops.js";
import type { DocumentScope, NewDocumentRecord } from "../domain/records.js";
import type { Cursor, DocumentAddress, StorageWrite } from "../storage/port.js";
import { scopeKey } from "../storage/scope.js";
import { incarnationFrom } from "./doc-cache.js";
import { deepFreeze } from "./freeze.js";
import type { DocChange, DocIncarnation, PreparedCommit } from "./prepared.js";
import { addressKey, type DocValue } from "./tokens.js";
import type { OpenDoc, TransactionState } from "./transaction-state.js";
import { commitSize, measuredSize } from "./value-size.js";

/*
 * Sealing: the callback returned and every operation it started settled.
 * Every draft is revoked and the transaction becomes one batch: table writes
 * in call order, then document content, fork copies, retirements (storage
 * applies retirements after content anyway). Forks and tasks made terminal
 * need storage scans; a commit without them seals without an await.
 */

const SCAN_PAGE = 256;

type Final = { value: DocValue; ops: Op[] };

interface ScopeDoc {
  readonly key: string;
  readonly address: DocumentAddress;
  readonly id: DocumentId;
  readonly record: NewDocumentRecord;
  readonly open: OpenDoc | undefined;
}

const NONE: readonly never[] = Object.freeze([]);

/** A map's values as an array; the shared empty array when there are none (most tables, most commits). */
function valuesOf<T>(map: ReadonlyMap<unknown, T> | undefined): readonly T[] {
  return map === undefined || map.size === 0 ? NONE : [...map.values()];
}

function addressOfRecord(record: NewDocumentRecord): DocumentAddress {
  return {
    kind: record.kind,
    scope: record.scope,
    ...(record.key !== undefined ? { key: record.key } : {}),
  };
}

function incarnationRecord(
  record: NewDocumentRecord & { createdAt?: unknown; retiredAt?: unknown },
): NewDocumentRecord {
  const { createdAt: _c, retiredAt: _r, ...rest } = record;
  return rest;
}

/** Revokes every draft without producing a batch (the callback threw). */
export function discard(tx: TransactionState): void {
  tx.revoked = true;
  if (tx.opened) for (const open of tx.opened) open.tracker.revoke();
}

/**
 * Revokes every draft and turns the transaction into one batch. Returns
 * `null` when nothing changed. Throws when preparation fails
 * (checkpointWhen throws).
 */
export function seal(tx: TransactionState): PreparedCommit | null | Promise<PreparedCommit | null> {
  tx.revoked = true;
  // Content follows the table writes straight away; fork copies and retirements come after it.
  const content = tx.tableWrites;
  let changes: DocChange[] | undefined;
  let retires: StorageWrite[] | undefined;
  const finals = tx.forks === undefined ? undefined : new Map<string, Final>();
  const opened = tx.opened;
  if (opened)
    for (let i = 0; i < opened.length; i++) {
      const open = opened[i] as OpenDoc;
      const change = sealDoc(tx, open, content, finals);
      if (change) {
        if (changes) changes.push(change);
        else changes = [change];
      }
      if (open.retired && !open.created)
        (retires ??= []).push({ type: "document.retire", id: open.id });
    }
  if (tx.forks === undefined && tx.terminalTasks === undefined && tx.retirements === undefined)
    return assemble(tx, changes ?? NONE, retires ?? NONE);
  return sealScopes(tx, changes ?? [], retires ?? [], finals);
}

/** One opened document's content write and change. */
function sealDoc(
  tx: TransactionState,
  open: OpenDoc,
  content: StorageWrite[],
  finals: Map<string, Final> | undefined,
): DocChange | undefined {
  const final = open.tracker.finish();
  finals?.set(open.key, final);
  if (open.created && open.retired) return undefined; // born and retired in one commit: nothing to store
  const version = open.token.version;
  const value = final.value;
  let ops: readonly Op[] = final.ops;
  let deltasSinceBase = open.deltasSinceBase;
  if (open.created || open.migrated) {
    tx.bytes += baseSize(tx, open, value);
    content.push(
      open.created
        ? {
            type: "document.create",
            record: open.record,
            content: { kind: "base", version, value },
          }
        : { type: "document.change", id: open.id, content: { kind: "base", version, value } },
    );
    ops = [["r", value]];
    deltasSinceBase = 0;
  } else if (final.ops.length > 0) {
    const checkpoint = open.token.checkpointWhen;
    const base = checkpoint
      ? checkpoint(value, final.ops, { deltasSinceBase: open.deltasSinceBase }) === true
      : false;
    tx.bytes += base ? baseSize(tx, open, value) : open.tracker.bytes;
    content.push({
      type: "document.change",
      id: open.id,
      // The batch's values are frozen whole (see isSealedBatches): the op tuples and paths too.
      content: base
        ? { kind: "base", version, value }
        : {
            kind: "delta",
            version,
            ops: deepFreeze(final.ops as unknown as Json[]) as unknown as Op[],
          },
    });
    deltasSinceBase = base ? 0 : deltasSinceBase + 1;
  } else if (!open.retired) return undefined; // opened, not changed
  const state: DocIncarnation | null = open.retired
    ? null
    : {
        id: open.id,
        record: open.record,
        createdAt: open.createdAt as Seq | undefined,
        version,
        value,
        deltasSinceBase,
      };
  return {
    addressKey: open.key,
    address: open.address,
    basedOn: open.basedOn,
    state,
    ops: state === null ? [] : ops,
  };
}

/**
 * A document stored whole: its value is one value, within the value limit.
 * Measured here (a walk of the value) because a base is written only when a
 * document is created, migrated or checkpointed.
 */
function baseSize(tx: TransactionState, open: OpenDoc, value: DocValue): number {
  return measuredSize(value, tx.kernel.limits, `${open.token.kind} (the whole document)`);
}

function assemble(
  tx: TransactionState,
  changes: readonly DocChange[],
  retires: readonly StorageWrite[],
  copies: readonly StorageWrite[] = NONE,
): PreparedCommit | null {
  // The transaction is revoked, so its table-write array can carry the batch (no copy).
  const writes = tx.tableWrites;
  for (let i = 0; i < copies.length; i++) writes.push(copies[i] as StorageWrite);
  for (let i = 0; i < retires.length; i++) writes.push(retires[i] as StorageWrite);
  if (writes.length === 0) return null;
  return {
    writes,
    bytes: commitSize(writes, tx.bytes, tx.kernel.limits),
    deferred: tx.deferred,
    conversations: valuesOf(tx.conversations),
    entries: tx.entries ?? NONE,
    tasks: valuesOf(tx.tasks),
    submissions: valuesOf(tx.submissions),
    docs: changes,
    afterCommit: tx.hooks ?? NONE,
  };
}

/** The rare part of sealing: fork copies, retirements, documents of tasks made terminal. */
async function sealScopes(
  tx: TransactionState,
  opened: DocChange[],
  retires: StorageWrite[],
  finals: Map<string, Final> | undefined,
): Promise<PreparedCommit | null> {
  const changes = new Map<string, DocChange>();
  for (const change of opened) changes.set(change.addressKey, change);
  const copies = tx.forks && finals ? await forkCopies(tx, finals) : [];
  for (const copy of copies) changes.set(copy.change.addressKey, copy.change);

  for (const [k, r] of tx.retirements ?? []) {
    retires.push({ type: "document.retire", id: r.id });
    changes.set(k, { addressKey: k, address: r.address, basedOn: r.basedOn, state: null, ops: [] });
  }
  for (const doc of tx.terminalTasks ? await terminalTaskDocs(tx) : []) {
    retires.push({ type: "document.retire", id: doc.id });
    changes.set(doc.key, {
      addressKey: doc.key,
      address: doc.address,
      basedOn: doc.open?.basedOn ?? changes.get(doc.key)?.basedOn ?? null,
      state: null,
      ops: [],
    });
  }
  return assemble(
    tx,
    [...changes.values()],
    retires,
    copies.map((copy) => copy.write),
  );
}

/** Live documents of a scope as this commit leaves them: storage, prepared commits, this transaction. */
async function scopeDocs(tx: TransactionState, scope: DocumentScope): Promise<ScopeDoc[]> {
  const pending = tx.kernel.docs.pendingStates();
  const found = new Map<string, ScopeDoc>();
  let cursor: Cursor | undefined;
  do {
    const page = await tx.kernel.storage.scanDocuments({ scope, at: "current" }, SCAN_PAGE, cursor);
    for (const record of page.items) {
      const address = addressOfRecord(record);
      const key = addressKey(address);
      found.set(key, {
        key,
        address,
        id: record.id,
        record: incarnationRecord(record),
        open: undefined,
      });
    }
    cursor = page.next;
  } while (cursor !== undefined);
  const wanted = scopeKey(scope);
  const sameScope = (a: DocumentScope): boolean => scopeKey(a) === wanted;
  for (const [key, { slot, state }] of pending) {
    if (!sameScope(slot.address.scope)) continue;
    if (state === null) found.delete(key);
    else
      found.set(key, {
        key,
        address: slot.address,
        id: state.id,
        record: state.record,
        open: undefined,
      });
  }
  for (const open of tx.opened ?? []) {
    if (!sameScope(open.address.scope) || (open.created && open.retired)) continue;
    found.set(open.key, {
      key: open.key,
      address: open.address,
      id: open.id,
      record: open.record,
      open,
    });
  }
  for (const key of tx.retirements?.keys() ?? []) found.delete(key);
  return [...found.values()];
}

/** A fresh id while sealing (the transaction is revoked already; a failure fails the session). */
function mint(tx: TransactionState): Promise<number> {
  return tx.kernel.mintId().then(undefined, tx.kernel.mintFailed);
}

async function forkCopies(
  tx: TransactionState,
  finals: Map<string, Final>,
): Promise<{ write: StorageWrite; change: DocChange }[]> {
  const out: { write: StorageWrite; change: DocChange }[] = [];
  for (const fork of tx.forks ?? []) {
    const parentScope: DocumentScope = { kind: "conversation", conversationId: fork.parent };
    const childScope: DocumentScope = { kind: "conversation", conversationId: fork.child };
    const copy = async (
      source: { id: DocumentId; record: NewDocumentRecord; address: DocumentAddress },
      at: Seq | "current",
      version: number,
      value: DocValue,
    ): Promise<void> => {
      const address: DocumentAddress = { ...source.address, scope: childScope };
      const key = addressKey(address);
      const id = (await mint(tx)) as DocumentId;
      const record = deepFreeze({
        ...source.record,
        id,
        scope: childScope,
      }) as unknown as NewDocumentRecord;
      out.push({
        write: { type: "document.copy", record, source: { id: source.id, at } },
        change: {
          addressKey: key,
          address,
          basedOn: null,
          state: { id, record, createdAt: undefined, version, value, deltasSinceBase: 0 },
          ops: [["r", value]],
        },
      });
    };
    // The fork point written by this very commit: "as of" it is the end of this commit.
    const atHere = tx.entries?.some((entry) => entry.id === fork.at) === true;
    for (const doc of await scopeDocs(tx, parentScope)) {
      if (doc.record.fork !== "current" && !(atHere && doc.record.fork === "asOf")) continue;
      let version: number;
      let value: DocValue;
      if (doc.open) {
        version = doc.open.token.version;
        value = (finals.get(doc.key) as Final).value;
      } else {
        const state = await tx.kernel.docs.prepared(tx.kernel.docs.slot(doc.key, doc.address));
        if (!state) continue;
        version = state.version;
        value = state.value;
      }
      await copy(doc, "current", version, value);
    }
    if (!atHere) {
      for (const source of await asOfSources(tx, parentScope, fork.at))
        await copy(source, source.seq, source.version, source.value);
    }
  }
  return out;
}

/**
 * Rewindable documents of the parent live at the seq of the fork point's
 * commit, with their value then. The seq lookup may wait for a prepared
 * commit to be stored; forks are rare, exactness matters more.
 */
async function asOfSources(tx: TransactionState, scope: DocumentScope, at: EntryId) {
  const sources: {
    id: DocumentId;
    record: NewDocumentRecord;
    address: DocumentAddress;
    seq: Seq;
    version: number;
    value: DocValue;
  }[] = [];
  const seq = await tx.kernel.entrySeq(at);
  if (seq === undefined) throw new UnknownRecord(`fork point entry ${at} is not stored`);
  let cursor: Cursor | undefined;
  do {
    const page = await tx.kernel.storage.scanDocuments({ scope, at: seq }, SCAN_PAGE, cursor);
    for (const record of page.items) {
      if (record.fork !== "asOf") continue;
      const doc = await tx.kernel.storage.document(record.id, seq);
      if (!doc) continue;
      const inc = incarnationFrom(doc);
      sources.push({
        id: record.id,
        record: inc.record,
        address: addressOfRecord(record),
        seq,
        version: inc.version,
        value: inc.value,
      });
    }
    cursor = page.next;
  } while (cursor !== undefined);
  return sources;
}

/** Task-scope documents of tasks this commit made terminal (they retire with it). */
async function terminalTaskDocs(tx: TransactionState): Promise<ScopeDoc[]> {
  const out: ScopeDoc[] = [];
  for (const taskId of tx.terminalTasks ?? []) {
    for (const doc of await scopeDocs(tx, { kind: "task", taskId: taskId as TaskId })) {
      if (doc.open?.retired) continue;
      out.push(doc);
    }
  }
  return out;
}
