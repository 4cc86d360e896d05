import type { DocumentId } from "../domain/ids.js";
import { copyJson, type JsonObject } from "../domain/json.js";
import { checkTextBytes, MAX_KEY_BYTES, MAX_KIND_BYTES } from "../domain/json-size.js";
import type { NewDocumentRecord } from "../domain/records.js";
import type { DocumentAddress } from "../storage/port.js";
import { checkVersion, migrateValue } from "./doc-versions.js";
import { DraftTracker } from "./draft.js";
import { deepFreeze } from "./freeze.js";
import type { DocIncarnation } from "./prepared.js";
import { addressKeyOf, addressOf, type AnyDocToken, type DocValue } from "./tokens.js";
import type { OpenDoc, TransactionState } from "./transaction-state.js";
import type { ValueLimits } from "./value-size.js";

/*
 * Documents in a transaction: `doc` opens (or creates) one and hands out its
 * draft; `replaceDoc` swaps the whole value; `retireDoc` ends an
 * incarnation. A document whose scope and state the session already holds
 * opens without an await: the common case of a commit that updates a
 * document it touched before.
 */

const VALUE = { depth: 0, freeze: true } as const;

function retiredHere(token: AnyDocToken): TypeError {
  return new TypeError(
    `document "${token.kind}" was retired in this transaction; a new incarnation needs a later commit`,
  );
}

/** A new incarnation's record, frozen: it goes into the batch and the session's state as it is. */
export function recordOf(
  address: DocumentAddress,
  id: DocumentId,
  token: AnyDocToken,
): NewDocumentRecord {
  const record: NewDocumentRecord = {
    id,
    kind: address.kind,
    scope: address.scope,
    ...(address.key !== undefined ? { key: address.key } : {}),
    ...(token.history !== undefined ? { history: token.history } : {}),
    ...(token.fork !== undefined ? { fork: token.fork } : {}),
  };
  return deepFreeze(record as unknown as JsonObject) as unknown as NewDocumentRecord;
}

function draftOf(open: OpenDoc, token: AnyDocToken): DocValue {
  if (open.token.version !== token.version)
    throw new TypeError(
      `document "${token.kind}" was opened in this transaction with version ${open.token.version}`,
    );
  if (open.retired) throw retiredHere(token);
  return open.tracker.draft;
}

/** Get-or-create a document and return its draft. */
export function doc(
  tx: TransactionState,
  token: AnyDocToken,
  scopeId: unknown,
  key: string | undefined,
  seed: unknown,
): DocValue | Promise<DocValue> {
  const k = addressKeyOf(token, scopeId, key);
  // The strings PostgreSQL indexes (see MAX_KEY_BYTES), checked before any I/O.
  checkTextBytes(token.kind, MAX_KIND_BYTES, "document kind");
  if (key !== undefined) checkTextBytes(key, MAX_KEY_BYTES, "document key");
  const open = tx.openDoc(k);
  if (open) return draftOf(open, token);
  let opening = tx.opening?.get(k);
  if (opening === undefined) {
    const now = openNow(tx, token, scopeId, k);
    if (now) {
      tx.addOpen(now);
      return draftOf(now, token);
    }
    const openings = (tx.opening ??= new Map());
    opening = openLater(tx, token, addressOf(token, scopeId, key), k, seed);
    openings.set(k, opening);
    // Opened: `open` has it now. Failed: a later call may try again.
    opening.then(
      () => openings.delete(k),
      () => openings.delete(k),
    );
  }
  return opening.then((opened) => {
    tx.stillOpen();
    return draftOf(opened, token);
  });
}

/** An existing document opened from what the session holds, or `undefined` when storage must be asked (or an id minted). */
function openNow(
  tx: TransactionState,
  token: AnyDocToken,
  scopeId: unknown,
  k: string,
): OpenDoc | undefined {
  if (tx.retirements?.has(k)) throw retiredHere(token);
  if (token.scope === "conversation" && !tx.localConversation(scopeId as number)) return undefined;
  if (token.scope === "task" && !tx.localTask(scopeId as number)) return undefined;
  const slot = tx.kernel.docs.touch(k);
  const state = slot && tx.kernel.docs.preparedNow(slot);
  if (!slot || !state) return undefined;
  return openExisting(k, slot.address, token, state, tx.kernel.limits);
}

function openExisting(
  k: string,
  address: DocumentAddress,
  token: AnyDocToken,
  state: DocIncarnation,
  limits: ValueLimits,
): OpenDoc {
  checkVersion(token, state);
  const migrated = state.version < token.version;
  const value = migrated ? migrateValue(token, state.value, state.version) : state.value;
  return {
    key: k,
    address,
    token,
    basedOn: state,
    id: state.id,
    record: state.record,
    created: false,
    migrated,
    createdAt: state.createdAt,
    deltasSinceBase: state.deltasSinceBase,
    tracker: new DraftTracker(value, token.kind, limits),
    retired: false,
  };
}

async function openLater(
  tx: TransactionState,
  token: AnyDocToken,
  address: DocumentAddress,
  k: string,
  seed: unknown,
): Promise<OpenDoc> {
  if (tx.retirements?.has(k)) throw retiredHere(token);
  if (address.scope.kind === "conversation")
    await tx.requireConversation(address.scope.conversationId);
  else if (address.scope.kind === "task") await tx.requireTask(address.scope.taskId);
  const slot = tx.kernel.docs.slot(k, address);
  const state = await tx.kernel.docs.prepared(slot);
  tx.stillOpen();
  let open: OpenDoc;
  if (state) open = openExisting(k, address, token, state, tx.kernel.limits);
  else {
    const initial = copyJson(
      token.family ? token.initial(seed) : token.initial(),
      `${token.kind} (initial)`,
      VALUE,
    );
    if (typeof initial !== "object" || initial === null)
      throw new TypeError(`${token.kind}: initial must return a JSON object or array`);
    const id = (await tx.mint()) as DocumentId;
    open = {
      key: k,
      address,
      token,
      basedOn: null,
      id,
      record: recordOf(address, id, token),
      created: true,
      migrated: false,
      createdAt: undefined,
      deltasSinceBase: 0,
      tracker: new DraftTracker(initial, token.kind, tx.kernel.limits),
      retired: false,
    };
  }
  tx.addOpen(open);
  return open;
}

/** Replaces a draft's whole value (`["r", value]`); returns the new draft, the old one is revoked. */
export function replaceDoc(tx: TransactionState, draft: unknown, value: unknown): DocValue {
  const open = byDraftOf(tx, draft);
  const next = open.tracker.replace(value);
  (tx.byDraft ??= new Map()).set(next, open);
  return next;
}

function byDraftOf(tx: TransactionState, draft: unknown): OpenDoc {
  if (typeof draft === "object" && draft !== null) {
    const known = tx.byDraft?.get(draft);
    if (known) return known;
    for (const open of tx.opened ?? []) {
      if (open.tracker.draft === draft) {
        (tx.byDraft ??= new Map()).set(draft, open);
        return open;
      }
    }
  }
  throw new TypeError("replaceDoc: not the root draft of a document opened in this transaction");
}

/** Ends the document's current incarnation; returns false when there is none. */
export async function retireDoc(
  tx: TransactionState,
  token: AnyDocToken,
  scopeId: unknown,
  key: string | undefined,
): Promise<boolean> {
  const k = addressKeyOf(token, scopeId, key);
  let open = tx.openDoc(k);
  const opening = open ? undefined : tx.opening?.get(k);
  if (opening) {
    open = await opening;
    tx.stillOpen();
  }
  if (open) {
    if (open.retired) return false;
    open.retired = true;
    return true;
  }
  if (tx.retirements?.has(k)) return false;
  const address = addressOf(token, scopeId, key);
  const slot = tx.kernel.docs.slot(k, address);
  const state = await tx.kernel.docs.prepared(slot);
  tx.stillOpen();
  if (!state) return false;
  (tx.retirements ??= new Map()).set(k, { address, id: state.id, basedOn: state });
  return true;
}
