declare const brand: unique symbol;

/** A compile-time brand; on disk and at run time these are plain numbers. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type ConversationId = Brand<number, "ConversationId">;
export type EntryId = Brand<number, "EntryId">;
export type TaskId = Brand<number, "TaskId">;
export type SubmissionId = Brand<number, "SubmissionId">;
export type DocumentId = Brand<number, "DocumentId">;
/** Commit sequence number: strictly increasing per storage, gaps allowed, first is 1. */
export type Seq = Brand<number, "Seq">;

export type AnyId = ConversationId | EntryId | TaskId | SubmissionId | DocumentId;

/** The root conversation always has id 1; `mintId` never returns it. */
export const ROOT_CONVERSATION_ID = 1 as ConversationId;

/** True for the numbers usable as ids and seqs: positive safe integers. */
export function isPositiveSafeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}
