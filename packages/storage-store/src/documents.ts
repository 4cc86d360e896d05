import { StorageCorrupted, type DocumentRecord } from "@durably/core";
import { isLiveAt, type StoredRevision } from "@durably/core/storage";
import { K, pad, prefixEnd, trailingNumber } from "./keys.js";
import { decodeDocumentRecord, decodeRevision, type DocumentState } from "./records.js";
import type { Reader } from "./view.js";

/**
 * The revisions a read of `state` at `at` needs: the newest base at or
 * before `at` and its deltas up to `at`, one range read (a rewindable read
 * before the newest base walks back to the base before `at`). History that
 * is not kept reads as nothing: the caller decides first whether to ask.
 */
export async function documentRevisions(
  reader: Reader,
  state: DocumentState,
  at: number | "current",
): Promise<{ revisions: StoredRevision[]; where: string }> {
  const id = state.record.id;
  const prefix = K.revisions(id);
  if (at === "current" || at >= state.base) {
    // The newest base is at or before `at`: read forward from it.
    const gte = K.revision(id, state.base);
    const lt = at === "current" ? prefixEnd(prefix) : K.revision(id, at + 1);
    return { revisions: await collect(reader.range({ gte, lt })), where: `keys ${gte} to ${lt}` };
  }
  // Read before the newest base: walk back from `at` to the base before it.
  const lt = K.revision(id, at + 1);
  const revisions: StoredRevision[] = [];
  for await (const [key, raw] of reader.range({ gte: prefix, lt, reverse: true })) {
    const revision = toRevision(key, raw);
    revisions.push(revision);
    if (revision.content.kind === "base") break;
  }
  revisions.reverse();
  return { revisions, where: `keys ${prefix} to ${lt}` };
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
    if (isLiveAt(record, at)) return record;
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
