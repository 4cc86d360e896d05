import type { NewDocumentRecord, StorageWrite } from "@durably/core";
import type { Batch, WriteConflict } from "@durably/core/storage";
import { columnText, rowCrc } from "./checksums.js";
import type { SqlValue } from "./sqlite-database.js";

/**
 * A write serialised for its row before the transaction starts, so the
 * write lock is held for statements only. Rows whose checksum does not
 * depend on the seq (conversations, tasks, submissions) carry it in `params`
 * already; the others get theirs inside the transaction, with the seq.
 */
export type EncodedWrite =
  | { type: "conversation" | "task" | "submission"; params: SqlValue[] }
  | { type: "entry"; json: string; head: 0 | 1 }
  /** `content` is the base's JSON, absent for a copy (its value is known only once planned). */
  | { type: "document.new"; recordJson: string; content: string | undefined }
  | { type: "document.change"; json: string }
  | { type: "document.retire" };

export interface EncodedCall {
  /** `batches[b][w]`: write w of batch b as written. */
  batches: EncodedWrite[][];
  /** The first write a serialiser could not encode (the batches from it on are not stored). */
  unstorable?: WriteConflict;
}

/** Encodes every batch, stopping at the first write whose value cannot be serialised. */
export function encodeCall(batches: readonly Batch[]): EncodedCall {
  const encoded: EncodedWrite[][] = [];
  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b] as Batch;
    const writes = new Array<EncodedWrite>(batch.length);
    for (let w = 0; w < batch.length; w++) {
      try {
        writes[w] = encodeWrite(batch[w] as StorageWrite);
      } catch (error) {
        // A RangeError: a string too long for the engine. Anything else is a bug and propagates.
        if (!(error instanceof RangeError)) throw error;
        return {
          batches: encoded,
          unstorable: { batchIndex: b, writeIndex: w, kind: "unstorable", detail: error.message },
        };
      }
    }
    encoded.push(writes);
  }
  return { batches: encoded };
}

function encodeWrite(write: StorageWrite): EncodedWrite {
  switch (write.type) {
    case "conversation": {
      const v = write.value;
      const json = JSON.stringify(v);
      const crc = rowCrc(json, columnText.conversation(v.id));
      return { type: "conversation", params: [v.id, v.owner?.taskId ?? null, json, crc] };
    }
    case "entry":
      return {
        type: "entry",
        json: JSON.stringify(write.value),
        head: write.value.head !== undefined && write.value.head !== null ? 1 : 0,
      };
    case "task": {
      const v = write.value;
      const json = JSON.stringify(v);
      const params: SqlValue[] = [
        v.id,
        v.conversationId,
        v.kind,
        v.state.status,
        v.abortRequested === true ? 1 : 0,
        v.background === true ? 1 : 0,
        v.owner ?? null,
        json,
        rowCrc(json, columnText.task(v.id)),
      ];
      return { type: "task", params };
    }
    case "submission": {
      const v = write.value;
      const json = JSON.stringify(v);
      const params: SqlValue[] = [
        v.id,
        v.conversationId,
        v.status,
        v.requestId ?? null,
        json,
        rowCrc(json, columnText.submission(v.id)),
      ];
      return { type: "submission", params };
    }
    case "document.create":
    case "document.copy": {
      // Storage stamps createdAt / retiredAt into columns; the record column keeps the rest.
      const {
        createdAt: _created,
        retiredAt: _retired,
        ...record
      } = write.record as NewDocumentRecord & { createdAt?: unknown; retiredAt?: unknown };
      return {
        type: "document.new",
        recordJson: JSON.stringify(record),
        content: write.type === "document.create" ? JSON.stringify(write.content.value) : undefined,
      };
    }
    case "document.change": {
      const c = write.content;
      return { type: "document.change", json: JSON.stringify(c.kind === "base" ? c.value : c.ops) };
    }
    case "document.retire":
      return { type: "document.retire" };
  }
}
