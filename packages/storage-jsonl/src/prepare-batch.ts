import {
  applyOps,
  checkBatchShape,
  highestId,
  InvalidOp,
  scopeKey,
  type BaseContent,
  type BatchProblem,
  type ConversationRecord,
  type DocumentContent,
  type DocumentRecord,
  type EntryRecord,
  type Json,
  type NewDocumentRecord,
  type StorageWrite,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { addressKey, liveAt, type JsonlState } from "./jsonl-state.js";

export type Current = { version: number; value: Json };

/** A write after every check, carrying what it needs to be written and applied without failing. */
export type PreparedWrite =
  | { type: "conversation"; value: ConversationRecord }
  | { type: "entry"; value: EntryRecord }
  | { type: "task"; value: TaskRecord }
  | { type: "submission"; value: SubmissionRecord }
  /** `base` is undefined only on open, for a revision reclaimed after a later base. */
  | {
      type: "document.new";
      record: DocumentRecord;
      base: BaseContent | undefined;
      source?: { id: number; at: number | "current" };
    }
  | {
      type: "document.change";
      id: number;
      content: DocumentContent | undefined;
      current: Current | undefined;
    }
  | { type: "document.retire"; id: number };

export interface PreparedBatch {
  seq: number;
  writes: PreparedWrite[];
  highestId: number;
}

/** What the earlier batches of the same `commit` call (not yet stored) changed, for the checks of later ones. */
export class CallOverlay {
  readonly conversations = new Set<number>();
  readonly entries = new Set<number>();
  readonly documents = new Map<
    number,
    { record: DocumentRecord; current: Current | undefined; retired: boolean }
  >();
  /** Address key to its live incarnation after the earlier batches (`null`: vacated). */
  readonly addresses = new Map<string, number | null>();
}

/**
 * How a batch gets the content of its copies: on commit from the source
 * document (possibly reading history from its file), on open from the
 * copy's own sidecar record.
 */
export interface CopyResolver {
  (
    writeIndex: number,
    source: { id: number; at: number | "current" },
    current: Current | undefined,
  ): Promise<BaseContent | string | undefined>;
}

/**
 * On open, a document revision whose sidecar record was legitimately
 * reclaimed (a later base supersedes it) arrives with a placeholder content
 * and its write index in `reclaimed`: it is applied without content checks.
 */
export const PLACEHOLDER_CONTENT: BaseContent = Object.freeze({
  kind: "base",
  version: 1,
  value: null,
});

const NONE: ReadonlySet<number> = new Set();

function problem(
  writeIndex: number,
  reason: BatchProblem["reason"],
  message: string,
): { problem: BatchProblem } {
  return { problem: { writeIndex, reason, message } };
}

function describeAddress(record: NewDocumentRecord): string {
  const key = record.key === undefined ? "no key" : `key ${JSON.stringify(record.key)}`;
  return `address (kind ${JSON.stringify(record.kind)}, scope ${scopeKey(record.scope)}, ${key})`;
}

/**
 * Runs every check that can refuse a (copied) batch against the stored state
 * plus the earlier batches of the call (`overlay`), and records the batch's
 * effects in `overlay`. The stored state is not changed. The same checks run
 * when markers are replayed on open, where a refusal means corruption.
 */
export async function prepareBatch(
  state: JsonlState,
  overlay: CallOverlay,
  batch: readonly StorageWrite[],
  seq: number,
  resolveCopy: CopyResolver,
  reclaimed: ReadonlySet<number> = NONE,
): Promise<{ batch: PreparedBatch } | { problem: BatchProblem }> {
  const shape = checkBatchShape(batch);
  if (shape !== undefined) return { problem: shape };

  const knownConversation = (id: number) =>
    state.conversations.has(id) || overlay.conversations.has(id);
  const head = (id: number) => {
    const staged = overlay.documents.get(id);
    if (staged !== undefined) return staged;
    const stored = state.documents.get(id);
    return (
      stored && {
        record: stored.record,
        current: stored.current,
        retired: stored.record.retiredAt !== undefined,
      }
    );
  };
  const occupant = (address: string) =>
    overlay.addresses.has(address)
      ? (overlay.addresses.get(address) ?? undefined)
      : liveAt(state, address);

  const writes: PreparedWrite[] = [];
  const retiring = new Set<number>();
  const createdHere = new Set<string>();
  for (let i = 0; i < batch.length; i++) {
    const write = batch[i] as StorageWrite;
    switch (write.type) {
      case "conversation": {
        const { id, parent } = write.value;
        if (knownConversation(id))
          return problem(i, "immutable-record", `conversation ${id} is already stored`);
        if (parent !== undefined && !knownConversation(parent.conversationId))
          return problem(
            i,
            "unknown-conversation",
            `conversation ${id} forks from unknown conversation ${parent.conversationId}`,
          );
        overlay.conversations.add(id);
        writes.push(write);
        break;
      }
      case "entry": {
        const { id, conversationId } = write.value;
        if (state.entries.has(id) || overlay.entries.has(id))
          return problem(i, "immutable-record", `entry ${id} is already stored`);
        if (!knownConversation(conversationId))
          return problem(
            i,
            "unknown-conversation",
            `entry ${id} names unknown conversation ${conversationId}`,
          );
        overlay.entries.add(id);
        writes.push(write);
        break;
      }
      case "task":
      case "submission": {
        const { id, conversationId } = write.value;
        if (!knownConversation(conversationId))
          return problem(
            i,
            "unknown-conversation",
            `${write.type} ${id} names unknown conversation ${conversationId}`,
          );
        writes.push(write);
        break;
      }
      case "document.create":
      case "document.copy": {
        const newRecord = write.record;
        if (head(newRecord.id) !== undefined)
          return problem(i, "duplicate-id", `document ${newRecord.id} already exists`);
        const address = addressKey(newRecord);
        const live = occupant(address);
        if (live !== undefined || createdHere.has(address))
          return problem(
            i,
            "address-occupied",
            `document ${newRecord.id}: ${describeAddress(newRecord)} already has live document ${live ?? "created earlier in this batch"}`,
          );
        let base: BaseContent | undefined;
        let source: { id: number; at: number | "current" } | undefined;
        if (write.type === "document.create") base = reclaimed.has(i) ? undefined : write.content;
        else {
          source = { id: write.source.id, at: write.source.at };
          const sourceHead = head(source.id);
          const resolved = await resolveCopy(
            i,
            source,
            sourceHead && !sourceHead.retired ? sourceHead.current : undefined,
          );
          if (typeof resolved === "string")
            return problem(i, "unknown-document", `document ${newRecord.id} copy: ${resolved}`);
          base = resolved;
        }
        const record = { ...newRecord, createdAt: seq } as DocumentRecord;
        overlay.documents.set(record.id, {
          record,
          current: base && { version: base.version, value: base.value },
          retired: false,
        });
        overlay.addresses.set(address, record.id);
        createdHere.add(address);
        writes.push({ type: "document.new", record, base, ...(source ? { source } : {}) });
        break;
      }
      case "document.change": {
        const { id } = write;
        const doc = head(id);
        if (doc === undefined)
          return problem(i, "unknown-document", `document ${id} does not exist`);
        if (doc.retired)
          return problem(
            i,
            "retired-document",
            `document ${id} was retired at seq ${doc.record.retiredAt ?? "earlier in this call"}`,
          );
        const content = reclaimed.has(i) ? undefined : write.content;
        let current: Current | undefined;
        if (content === undefined) current = undefined;
        else if (content.kind === "base")
          current = { version: content.version, value: content.value };
        else if (doc.current !== undefined) {
          if (content.version !== doc.current.version)
            return problem(
              i,
              "version-crossing",
              `document ${id}: a delta for version ${content.version} on version ${doc.current.version} (a version change needs a base)`,
            );
          try {
            current = { version: content.version, value: applyOps(doc.current.value, content.ops) };
          } catch (error) {
            if (!(error instanceof InvalidOp)) throw error;
            // Storing it would leave a document that can never be read again.
            return problem(
              i,
              "invalid-write",
              `document ${id} delta does not apply to its current value: ${error.message}`,
            );
          }
        }
        overlay.documents.set(id, { record: doc.record, current, retired: false });
        writes.push({ type: "document.change", id, content, current });
        break;
      }
      case "document.retire": {
        const { id } = write;
        const doc = head(id);
        if (doc === undefined)
          return problem(i, "unknown-document", `document ${id} does not exist`);
        if (doc.retired)
          return problem(
            i,
            "retired-document",
            `document ${id} was retired at seq ${doc.record.retiredAt ?? "earlier in this call"}`,
          );
        if (retiring.has(id))
          return problem(i, "retired-document", `document ${id} is retired twice in one batch`);
        retiring.add(id);
        writes.push(write);
        break;
      }
    }
  }
  // Retirement takes effect after every content write of the batch.
  for (const id of retiring) {
    const doc = head(id);
    if (doc === undefined) continue;
    const record = { ...doc.record, retiredAt: seq } as DocumentRecord;
    overlay.documents.set(id, { record, current: undefined, retired: true });
    const address = addressKey(record);
    if (occupant(address) === id) overlay.addresses.set(address, null);
  }
  return { batch: { seq, writes, highestId: highestId(batch) } };
}
