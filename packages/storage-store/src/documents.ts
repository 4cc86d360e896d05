import {
  StorageCorrupted,
  StorageRequestError,
  type DocumentRecord,
  type MaterializedDocument,
} from "@durably/core";
import {
  historyUnavailable,
  materializeRevisions,
  type StoredRevision,
} from "@durably/core/storage";
import { K, pad, prefixEnd, trailingNumber } from "./keys.js";
import {
  currentOnly,
  decodeDocumentRecord,
  decodeRevision,
  isLive,
  type DocumentState,
} from "./records.js";
import type { Reader } from "./view.js";

/**
 * The value of a document at `at`: one range read of its revisions from the
 * newest base at or before `at`. `undefined` when the incarnation is not live
 * at `at`; a current-only document read before its newest base (or after its
 * retirement reclaimed it) rejects with "history-unavailable".
 */
export async function readDocument(
  reader: Reader,
  state: DocumentState,
  at: number | "current",
): Promise<MaterializedDocument | undefined> {
  const { record } = state;
  const id = record.id;
  if (!isLive(record, at)) return undefined;
  const prefix = K.revisions(id);
  let revisions: StoredRevision[];
  let where: string;
  if (at === "current" || at >= state.base) {
    // The newest base is at or before `at`: read forward from it.
    const gte = K.revision(id, state.base);
    const lt = at === "current" ? prefixEnd(prefix) : K.revision(id, at + 1);
    if (at !== "current" && currentOnly(record) && record.retiredAt !== undefined)
      throw retiredHistory(record, at);
    revisions = await collect(reader.range({ gte, lt }));
    where = `keys ${gte} to ${lt}`;
  } else if (currentOnly(record)) {
    if (record.retiredAt !== undefined) throw retiredHistory(record, at);
    throw historyUnavailable(id, at, state.base);
  } else {
    // Rewindable, read before the newest base: walk back from `at` to the base before it.
    const lt = K.revision(id, at + 1);
    revisions = [];
    for await (const [key, raw] of reader.range({ gte: prefix, lt, reverse: true })) {
      const revision = toRevision(key, raw);
      revisions.push(revision);
      if (revision.content.kind === "base") break;
    }
    revisions.reverse();
    where = `keys ${prefix} to ${lt}`;
  }
  const result = materializeRevisions(id, revisions, where);
  // `state` may be shared with the cache: hand out a copy (a record is flat apart from its scope).
  return { record: { ...record, scope: { ...record.scope } }, ...result };
}

async function collect(pairs: AsyncIterable<[string, string]>): Promise<StoredRevision[]> {
  const out: StoredRevision[] = [];
  for await (const [key, raw] of pairs) out.push(toRevision(key, raw));
  return out;
}

function toRevision(key: string, raw: string): StoredRevision {
  const seq = trailingNumber(key);
  if (seq === undefined) throw new StorageCorrupted(`key ${key}: not a revision key`, { key });
  return { seq, content: decodeRevision(key, raw) };
}

function retiredHistory(record: DocumentRecord, at: number): StorageRequestError {
  return new StorageRequestError(
    "history-unavailable",
    `document ${record.id} keeps only its current value and was retired at seq ${String(record.retiredAt)}: no value at seq ${at}`,
  );
}

/**
 * The incarnation at an address (`da/` prefix) live at `at`. At most one is;
 * the newest is checked first, since that is the live one in practice.
 */
export async function findLive(
  reader: Reader,
  prefix: string,
  at: number | "current",
): Promise<DocumentRecord | undefined> {
  for await (const [key, raw] of reader.range({
    gte: prefix,
    lt: prefixEnd(prefix),
    reverse: true,
  })) {
    const record = decodeDocumentRecord(key, raw);
    if (isLive(record, at)) return record;
  }
  return undefined;
}

/** Revision keys of a document below `beforeSeq` (all of them when absent), for reclamation. */
export async function revisionKeys(
  reader: Reader,
  documentId: number,
  beforeSeq?: number,
): Promise<string[]> {
  const prefix = K.revisions(documentId);
  const lt = beforeSeq === undefined ? prefixEnd(prefix) : prefix + pad(beforeSeq);
  const keys: string[] = [];
  for await (const [key] of reader.range({ gte: prefix, lt })) keys.push(key);
  return keys;
}
