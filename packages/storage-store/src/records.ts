import {
  StorageCorrupted,
  type ConversationRecord,
  type DocumentContent,
  type DocumentRecord,
  type EntryRecord,
  type SubmissionRecord,
  type TaskRecord,
} from "@durably/core";
import { decodeObject, isId } from "./codec.js";

/** `d/<id>`: an incarnation, the version of its current value and the seq of its newest base. */
export interface DocumentState {
  record: DocumentRecord;
  version: number;
  base: number;
}

/** The fields of a task the `tc/ tk/ to/ ts/` indexes filter on, stored as each index key's value. */
export interface TaskSummary {
  c: number;
  k: string;
  s: string;
  a: boolean;
  b: boolean;
  o?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const decodeConversation = (key: string, raw: string) =>
  decodeObject<ConversationRecord>(key, raw, "a conversation record", (v) => isId(v.id));

export const decodeStoredEntry = (key: string, raw: string) =>
  decodeObject<{ seq: number; entry: EntryRecord }>(
    key,
    raw,
    "a stored entry { seq, entry }",
    (v) => isId(v.seq) && isObject(v.entry) && isId(v.entry.id) && isId(v.entry.conversationId),
  );

export const decodeTask = (key: string, raw: string) =>
  decodeObject<TaskRecord>(
    key,
    raw,
    "a task record",
    (v) => isId(v.id) && isId(v.conversationId) && typeof v.kind === "string" && isObject(v.state),
  );

export const decodeTaskSummary = (key: string, raw: string) =>
  decodeObject<TaskSummary>(
    key,
    raw,
    "a task summary",
    (v) =>
      isId(v.c) &&
      typeof v.k === "string" &&
      typeof v.s === "string" &&
      typeof v.a === "boolean" &&
      typeof v.b === "boolean",
  );

export const decodeSubmission = (key: string, raw: string) =>
  decodeObject<SubmissionRecord>(
    key,
    raw,
    "a submission record",
    (v) => isId(v.id) && isId(v.conversationId) && typeof v.status === "string",
  );

export const decodeSubmissionSummary = (key: string, raw: string) =>
  decodeObject<{ s: string }>(key, raw, "a submission summary", (v) => typeof v.s === "string");

const isDocumentRecord = (v: unknown): v is DocumentRecord =>
  isObject(v) && isId(v.id) && typeof v.kind === "string" && isObject(v.scope) && isId(v.createdAt);

export const decodeDocumentRecord = (key: string, raw: string) =>
  decodeObject<DocumentRecord>(key, raw, "a document record", isDocumentRecord);

export const decodeDocumentState = (key: string, raw: string) =>
  decodeObject<DocumentState>(
    key,
    raw,
    "a document state { record, version, base }",
    (v) => isDocumentRecord(v.record) && isId(v.version) && isId(v.base),
  );

export const decodeRevision = (key: string, raw: string) =>
  decodeObject<DocumentContent>(
    key,
    raw,
    "a document revision",
    (v) =>
      isId(v.version) &&
      ((v.kind === "base" && "value" in v) || (v.kind === "delta" && Array.isArray(v.ops))),
  );

/** A stored pointer (`ei/`) or index key naming an id that must exist. */
export function missingTarget(key: string, target: string): StorageCorrupted {
  return new StorageCorrupted(`key ${key} points at ${target}, which is missing`, { key });
}

export function taskSummary(task: TaskRecord): string {
  const s: TaskSummary = {
    c: task.conversationId,
    k: task.kind,
    s: task.state.status,
    a: task.abortRequested === true,
    b: task.background === true,
  };
  if (task.owner !== undefined) s.o = task.owner;
  return JSON.stringify(s);
}
