/**
 * `@durably/core/storage`: the kit for writing a storage backend. Implement
 * the narrow `StorageBackend` interface and put `CheckedStorage` in front of
 * it; the front does the policy every backend shares (guards, argument
 * checks, cursors, copies, fork ancestry, every refusal). The helpers below
 * are what a backend needs besides: the in-memory index, cursor and page
 * helpers, document materialisation, sorted id lists.
 */
export type * from "./port.js";
export type * from "./backend.js";
export type * from "./plan-types.js";
export { CheckedStorage } from "./checked-storage.js";
export { planBatch, isProblem } from "./plan-batch.js";
export { collectNeeds } from "./commit-call.js";
export { describeAddress } from "./refusals.js";
export { detachBatches, type DetachedBatches } from "./detach.js";
export { addressKey, isCurrentOnly, isHistoryKept, isLiveAt } from "./lifetimes.js";
export { KnownDocuments, type KnownDocument } from "./known-documents.js";
export {
  historyAt,
  MemoryIndex,
  requestKey,
  type IndexedDocument,
  type ContentWrite,
  type RevisionMaker,
} from "./memory-index/memory-index.js";
export { IndexedBackend, indexPlanView } from "./memory-index/indexed-backend.js";
export { Table } from "./memory-index/table.js";
export * from "./requests.js";
export * from "./scope.js";
export * from "./ancestry.js";
export * from "./materialize.js";
export * from "./batch-checks.js";
export * from "./query-fields.js";
export * from "./pages.js";
export * from "./sorted-ids.js";
