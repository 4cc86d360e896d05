import {
  copyJson,
  type DocumentContent,
  type Json,
  type NewDocumentRecord,
  type RefusalReason,
  type StorageWrite,
} from "@durably/core";
import { checkBatchShape, highestId, scopeKey, type BatchProblem } from "@durably/core/storage";
import { columnText, rowCrc } from "./checksums.js";
import type { SqlValue } from "./sqlite-database.js";

/**
 * A write copied out of the caller's objects and already serialised: the
 * transaction touches only these, so the caller may mutate its input as
 * soon as `commit` is called. Rows whose checksum does not depend on the
 * seq (conversations, tasks, submissions) carry it in `params` already;
 * the others get theirs inside the transaction, with the seq.
 */
export type PlannedWrite =
  | {
      type: "conversation";
      index: number;
      id: number;
      parentId: number | undefined;
      params: SqlValue[];
    }
  | {
      type: "entry";
      index: number;
      id: number;
      conversationId: number;
      head: 0 | 1;
      json: string;
    }
  | {
      type: "task" | "submission";
      index: number;
      id: number;
      conversationId: number;
      params: SqlValue[];
    }
  | {
      type: "document.new";
      index: number;
      id: number;
      kind: string;
      key: string | null;
      scope: string;
      rewindable: 0 | 1;
      recordJson: string;
      source:
        | { kind: "base"; version: number; value: Json; json: string }
        | { kind: "copy"; id: number; at: number | "current" };
    }
  | {
      type: "document.change";
      index: number;
      id: number;
      content: DocumentContent;
      json: string;
    }
  | { type: "document.retire"; index: number; id: number };

export type PlannedBatch =
  { writes: PlannedWrite[]; highestId: number } | { problem: BatchProblem };

export function problemAt(index: number, reason: RefusalReason, message: string): BatchProblem {
  return { writeIndex: index, reason, message };
}

function isCurrentOnly(record: NewDocumentRecord): boolean {
  return record.scope.kind !== "conversation" || record.history !== "rewindable";
}

/** Copies, validates (strict JSON, shape) and serialises one batch. Runs before any I/O. */
export function planBatch(input: unknown, batchIndex: number): PlannedBatch {
  if (!Array.isArray(input))
    return {
      problem: problemAt(0, "invalid-write", `batches[${batchIndex}] is not an array of writes`),
    };
  const batch: StorageWrite[] = new Array<StorageWrite>(input.length);
  for (let i = 0; i < input.length; i++) {
    try {
      batch[i] = copyJson(input[i], `batches[${batchIndex}][${i}]`) as unknown as StorageWrite;
    } catch (error) {
      return { problem: unstorable(error, batchIndex, i) };
    }
  }
  const shape = checkBatchShape(batch);
  if (shape !== undefined) return { problem: shape };
  const writes: PlannedWrite[] = [];
  for (let index = 0; index < batch.length; index++) {
    try {
      writes.push(planWrite(batch[index] as StorageWrite, index));
    } catch (error) {
      return { problem: unstorable(error, batchIndex, index) };
    }
  }
  return { writes, highestId: highestId(batch) };
}

/**
 * Why a write cannot be stored, as a refusal of its batch: a `TypeError`
 * from the JSON check (it names the path), or a `RangeError` when the value
 * is too deep or too large for the JavaScript engine to copy or serialise.
 * Anything else is a bug and propagates.
 */
function unstorable(error: unknown, batchIndex: number, writeIndex: number): BatchProblem {
  if (error instanceof TypeError) return problemAt(writeIndex, "invalid-write", error.message);
  if (error instanceof RangeError)
    return problemAt(
      writeIndex,
      "invalid-write",
      `batches[${batchIndex}][${writeIndex}] cannot be stored: it is nested too deeply or too large to copy and serialise (${error.message})`,
    );
  throw error;
}

/** Serialises one checked write and computes the checksum parts known before the transaction. */
function planWrite(write: StorageWrite, index: number): PlannedWrite {
  switch (write.type) {
    case "conversation": {
      const v = write.value;
      const json = JSON.stringify(v);
      const owner = v.owner?.taskId ?? null;
      const crc = rowCrc(json, columnText.conversation(v.id));
      const params = [v.id, owner, json, crc];
      return {
        type: "conversation",
        index,
        id: v.id,
        parentId: v.parent?.conversationId,
        params,
      };
    }
    case "entry": {
      const json = JSON.stringify(write.value);
      return {
        type: "entry",
        index,
        id: write.value.id,
        conversationId: write.value.conversationId,
        head: write.value.head !== undefined && write.value.head !== null ? 1 : 0,
        json,
      };
    }
    case "task": {
      const v = write.value;
      const columns = [
        v.id,
        v.conversationId,
        v.kind,
        v.state.status,
        v.abortRequested === true ? 1 : 0,
        v.background === true ? 1 : 0,
        v.owner ?? null,
      ] as const;
      const json = JSON.stringify(v);
      const params = [...columns, json, rowCrc(json, columnText.task(v.id))];
      return { type: "task", index, id: v.id, conversationId: v.conversationId, params };
    }
    case "submission": {
      const v = write.value;
      const columns = [v.id, v.conversationId, v.status, v.requestId ?? null] as const;
      const json = JSON.stringify(v);
      const params = [...columns, json, rowCrc(json, columnText.submission(v.id))];
      return {
        type: "submission",
        index,
        id: v.id,
        conversationId: v.conversationId,
        params,
      };
    }
    case "document.create":
    case "document.copy": {
      // Storage stamps createdAt / retiredAt; the record column keeps the rest.
      const {
        createdAt: _created,
        retiredAt: _retired,
        ...record
      } = write.record as NewDocumentRecord & {
        createdAt?: unknown;
        retiredAt?: unknown;
      };
      let source: Extract<PlannedWrite, { type: "document.new" }>["source"];
      if (write.type === "document.create") {
        const json = JSON.stringify(write.content.value);
        const { version, value } = write.content;
        source = { kind: "base", version, value, json };
      } else source = { kind: "copy", id: write.source.id, at: write.source.at };
      const recordJson = JSON.stringify(record);
      return {
        type: "document.new",
        index,
        id: record.id,
        kind: record.kind,
        key: record.key ?? null,
        scope: scopeKey(record.scope),
        rewindable: isCurrentOnly(record) ? 0 : 1,
        recordJson,
        source,
      };
    }
    case "document.change": {
      const c = write.content;
      const json = JSON.stringify(c.kind === "base" ? c.value : c.ops);
      return {
        type: "document.change",
        index,
        id: write.id,
        content: c,
        json,
      };
    }
    case "document.retire":
      return { type: "document.retire", index, id: write.id };
  }
}
