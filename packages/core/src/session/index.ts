export {
  Session,
  type SessionOptions,
  type SessionSettings,
  type CommitOptions,
} from "./session.js";
export {
  Transaction,
  type AppendEntryInput,
  type CreateTaskOptions,
  type CreateSubmissionInput,
  type SubmissionSettlement,
} from "./transaction.js";
export { SessionReader } from "./reader.js";
export {
  defineDoc,
  defineDocFamily,
  type DocToken,
  type DocFamilyToken,
  type AnyDocToken,
  type DocOptions,
  type DocFamilyOptions,
  type DocScopeKind,
  type DocValue,
  type ScopeIdOf,
  type CheckpointInfo,
  type TaskToken,
} from "./tokens.js";
export { DraftTracker, type Draft } from "./draft.js";
export { stringOps } from "./string-ops.js";
export type { CommitInfo } from "./prepared.js";
export type { CommitEvent, CommitListener, DocListener, ListenerErrorHandler } from "./watches.js";
export type { FailureListener } from "./failure-listeners.js";
export type { GroupCommitStats } from "./group-commit.js";
export { isSealedBatches } from "./sealed-batches.js";
export type { LimitOptions } from "./value-size.js";
