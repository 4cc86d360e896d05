import type { SubmissionId } from "../domain/ids.js";
import type { SubmissionRecord } from "../domain/records.js";
import type { CallOptions } from "../storage/port.js";
import type { Session } from "../session/session.js";
import type { ListenerErrorHandler } from "../session/watches.js";
import type { TaskDefinition } from "../tasks/define-task.js";
import type { Scheduler } from "../tasks/scheduler.js";
import type { CompactionCheckpoint, CompactionInput } from "./compaction-task.js";
import type { CompactionPolicy, GenerationCheckpoint } from "./generation-task.js";
import type { GenerationInput } from "./placement.js";

/** What conversations and submissions share of their harness (internal). */
export interface HarnessContext {
  readonly session: Session;
  readonly scheduler: Scheduler;
  readonly generation: TaskDefinition<GenerationInput, GenerationCheckpoint>;
  readonly compaction: TaskDefinition<CompactionInput, CompactionCheckpoint>;
  readonly compactionPolicy: CompactionPolicy;
  readonly onListenerError: ListenerErrorHandler;
  /** The names of the harness's models (a submit or a configuration may name one). */
  readonly modelNames: ReadonlySet<string>;
  /** The names of the harness's tools (a configuration may name them). */
  readonly toolNames: ReadonlySet<string>;
  /** The names of the harness's hook sets (a configuration may name them). */
  readonly hookNames: ReadonlySet<string>;
  /**
   * Aborted when the harness closes (reason `SessionClosed`) or its session
   * fails (reason the `SessionFailed`): long waits (streams) end with it.
   */
  readonly closing: AbortSignal;
  /** Starts the scheduler if it is not running (idempotent). */
  resume(options?: CallOptions): Promise<void>;
  /** Resolves with the submission once it is settled (done or unanswered). */
  settled(id: SubmissionId, options?: CallOptions): Promise<SubmissionRecord>;
}
