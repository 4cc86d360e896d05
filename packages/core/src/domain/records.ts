import type { ConversationId, DocumentId, EntryId, Seq, SubmissionId, TaskId } from "./ids.js";
import type { Json, JsonObject } from "./json.js";

/** Model messages stored in an entry's `model` field. */
export type TextPart = { type: "text"; text: string };
/** An image for the model: base64 `data` (no `data:` prefix) of `mediaType`, e.g. "image/png". */
export type ImagePart = { type: "image"; mediaType: string; data: string };
/** What user and tool-result messages may hold besides a plain string. */
export type ContentPart = TextPart | ImagePart;
/**
 * The model's reasoning ("thinking"), kept on its assistant message.
 * `providerMetadata` is what the provider needs to accept it back (a
 * signature, say); never credentials.
 */
export type ReasoningPart = { type: "reasoning"; text: string; providerMetadata?: JsonObject };
export type ToolCallPart = {
  type: "toolCall";
  id: string;
  name: string;
  arguments: JsonObject;
  /** What the provider attached to the call and needs back with it (e.g. a thought signature). */
  providerMetadata?: JsonObject;
};
export type StopReason = "stop" | "toolUse" | "length" | "error" | "aborted";
/** `content` is a string (every message stored before content parts existed) or parts. */
export type UserMessage = { role: "user"; content: string | ContentPart[] };
/** Parts in the order the model produced them. */
export type AssistantMessage = {
  role: "assistant";
  content: (TextPart | ReasoningPart | ToolCallPart)[];
  stopReason: StopReason;
};
export type ToolResultMessage = {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: string | ContentPart[];
  isError: boolean;
};
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** A change to what the model sees, carried by an entry: hide an earlier entry or replace its messages. */
export type ContextEdit =
  { type: "omit"; entryId: EntryId } | { type: "replace"; entryId: EntryId; model: Message[] };

export type Ownership = { kind: "ownerless" } | { kind: "task"; taskId: TaskId };

export interface ConversationRecord {
  id: ConversationId;
  /** A fork: this conversation sees the parent's entries up to and including `at`. */
  parent?: { conversationId: ConversationId; at: EntryId };
  /** Set when a task owns the conversation. */
  owner?: { conversationId: ConversationId; taskId: TaskId };
}

export interface EntryRecord {
  id: EntryId;
  conversationId: ConversationId;
  kind: string;
  data?: Json;
  model?: Message[];
  /** A head marker: the model's context starts at this entry. */
  head?: EntryId;
  edits?: ContextEdit[];
  byTaskId?: TaskId;
}

export type TaskStatus = "pending" | "running" | "waiting" | "completing" | "terminal";
export type ErrorInfo = { name: string; message: string; code?: string };
export type TaskOutcome =
  | { kind: "completed"; value?: Json }
  | { kind: "failed"; error: ErrorInfo }
  | { kind: "aborted"; reason?: string }
  /** Ended by the scheduler without running: its owner was gone, or it was aborted where no definition can run it (`reason` says why). */
  | { kind: "orphaned"; reason?: string }
  | { kind: "faulted"; error: ErrorInfo };
export type WaitPolicy = "failFast" | "allSettled";
export type TaskState =
  | { status: "pending" | "running"; checkpoint: Json }
  | { status: "waiting"; checkpoint: Json; on: TaskId[]; policy: WaitPolicy }
  | { status: "completing" | "terminal"; outcome: TaskOutcome };

export interface TaskRecord {
  id: TaskId;
  conversationId: ConversationId;
  kind: string;
  version: number;
  input: Json;
  owner?: TaskId;
  background: boolean;
  abortRequested: boolean;
  state: TaskState;
  memos?: JsonObject;
  /** Session clock (ms since epoch) when first reserved / when it became terminal. */
  startedAt?: number;
  endedAt?: number;
}

export type SubmissionStatus = "queued" | "placed" | "done" | "unanswered";
export interface SubmissionRecord {
  id: SubmissionId;
  conversationId: ConversationId;
  requestId?: string;
  type: "input" | "write";
  status: SubmissionStatus;
  /** What was submitted (an input's text, a write's payload); kept so a queued submission survives a restart. */
  content?: Json;
  entry?: EntryId;
  answer?: EntryId;
  reason?: string;
  detail?: Json;
}

export type DocumentScope =
  | { kind: "session" }
  | { kind: "conversation"; conversationId: ConversationId }
  | { kind: "task"; taskId: TaskId };
export type DocumentHistory = "latest" | "rewindable";
export type ForkPolicy = "asOf" | "current" | "initial";

export interface DocumentRecord {
  id: DocumentId;
  kind: string;
  key?: string;
  /** Seq of the commit that created this incarnation (stamped by storage). */
  createdAt: Seq;
  /** Seq of the commit that retired it (stamped by storage). */
  retiredAt?: Seq;
  scope: DocumentScope;
  /** Conversation scope only; absent means "latest". */
  history?: DocumentHistory;
  /** Conversation scope only. */
  fork?: ForkPolicy;
}

/** A document record as written: storage stamps `createdAt` / `retiredAt` from the batch's seq. */
export type NewDocumentRecord = Omit<DocumentRecord, "createdAt" | "retiredAt">;
