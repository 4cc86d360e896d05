export type {
  Model,
  ModelError,
  ModelErrorKind,
  ModelEvent,
  ModelPrices,
  ModelRequest,
  ModelSettings,
  ModelStreamOptions,
  ModelUsage,
  ToolSpec,
} from "./model.js";
export { checkContent, contentText } from "./content.js";
export {
  SCRIPTED_SUMMARY,
  ScriptedModel,
  type ScriptedError,
  type ScriptedModelOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
} from "./scripted-model.js";
export {
  checkSchema,
  validateSchema,
  type JsonSchema,
  type JsonSchemaType,
  type JsonSubschema,
  type SchemaViolation,
} from "./json-schema.js";
export {
  isStandardSchema,
  type SchemaWithJsonSchema,
  type StandardIssue,
  type StandardResult,
  type StandardSchemaV1,
} from "./standard-schema.js";
export {
  defineTool,
  toolsByName,
  type Tool,
  type ApprovalContext,
  type ToolApi,
  type ToolApproval,
  type ToolCommitOptions,
  type ToolDefinition,
  type ToolParameters,
  type ToolReplay,
  type ToolResult,
} from "./tool.js";
export { executeToolCall, runToolCall, type ToolCallOutcome } from "./tool-call.js";
export {
  boundedOutputText,
  DEFAULT_OUTPUT_BOUND,
  type OutputCut,
  type ToolOutputBound,
} from "./tool-output.js";
export { contextStart, deriveContext, MISSING_RESULT_CONTENT } from "./context.js";
export {
  LiveDoc,
  type LiveApproval,
  type LiveCompaction,
  type LiveGeneration,
  type LiveRetry,
  type LiveRun,
  type LiveState,
  type LiveToolSlot,
} from "./live.js";
export {
  AgentDoc,
  UNKNOWN_MODEL,
  UNKNOWN_TOOL,
  type AgentConfig,
  type AgentState,
} from "./agent.js";
export { costOf, UsageDoc, type UsageReport, type UsageState, type UsageTotals } from "./usage.js";
export {
  COMPACTION_ENTRY,
  COMPACTION_INSTRUCTIONS,
  SUMMARY_PREFIX,
  planCompaction,
  transcriptText,
  type CompactionPlan,
  type CompactionReason,
} from "./compaction.js";
export {
  COMPACTION_TASK,
  type CompactionCheckpoint,
  type CompactionInput,
  type CompactionResult,
} from "./compaction-task.js";
export { DEFAULT_COMPACTION, type CompactionSettings } from "./compaction-policy.js";
export {
  InboxDoc,
  type InboxState,
  type QueuedInput,
  type QueuedWrite,
  type WriteEntry,
} from "./inbox.js";
export { ASSISTANT_ENTRY, TOOL_RESULT_ENTRY, USER_ENTRY } from "./entries.js";
export {
  GENERATION_TASK,
  type CompactionPolicy,
  type GenerationCheckpoint,
  type RetryCause,
} from "./generation-task.js";
export {
  assembleInstructions,
  BASE_SECTION,
  layerInstructions,
  type InstructionSection,
  type Instructions,
} from "./instructions.js";
export { DEFAULT_MODEL, type ModelRegistration, type RegisteredModel } from "./models.js";
export {
  DEFAULT_RETRY,
  networkFailureCode,
  retryDelay,
  thrownModelError,
  type RetryPolicy,
  type RetrySettings,
} from "./retry-policy.js";
export { TOOL_TASK, type ToolCheckpoint, type ToolTaskInput } from "./tool-task.js";
export type { GenerationInput } from "./placement.js";
export {
  Harness,
  type HarnessCloseReport,
  type HarnessOptions,
  type HarnessSettings,
} from "./harness.js";
export { Conversation } from "./conversation.js";
export type { SubagentRequest, SubagentResult } from "./subagent.js";
export type { SubmitInput, SubmitInputMessage, SubmitWrite } from "./submit.js";
export { Submission } from "./submission.js";
export { ApprovalNotPending, SubmissionUnanswered } from "./errors.js";
export {
  HOOK_FAILED,
  HOOK_INVALID,
  UNKNOWN_HOOKS,
  type HookContext,
  type Hooks,
  type ToolHookContext,
} from "./hooks.js";
export {
  APPROVAL_ENTRY,
  type ApprovalDecision,
  type ApprovalInput,
  type PendingApproval,
} from "./approval.js";
export type { ConversationEvent } from "./stream-events.js";
export type { StreamOptions } from "./stream.js";
export type { ConversationView, ViewListener, ViewOps, WatchOptions } from "./watch.js";
export type { WaitingApproval } from "./waiting-approvals.js";
