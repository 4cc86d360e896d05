export type {
  Model,
  ModelError,
  ModelErrorKind,
  ModelEvent,
  ModelRequest,
  ModelSettings,
  ModelStreamOptions,
  ModelUsage,
  ToolSpec,
} from "./model.js";
export { checkContent, contentText } from "./content.js";
export {
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
  type SchemaViolation,
} from "./json-schema.js";
export {
  defineTool,
  toolsByName,
  type Tool,
  type ToolApi,
  type ToolDefinition,
  type ToolReplay,
  type ToolResult,
} from "./tool.js";
export { runToolCall } from "./tool-call.js";
export { contextStart, deriveContext, MISSING_RESULT_CONTENT } from "./context.js";
export {
  LiveDoc,
  type LiveGeneration,
  type LiveRetry,
  type LiveRun,
  type LiveState,
  type LiveToolSlot,
} from "./live.js";
export { InboxDoc, type InboxState, type QueuedInput } from "./inbox.js";
export { ASSISTANT_ENTRY, TOOL_RESULT_ENTRY, USER_ENTRY } from "./entries.js";
export { GENERATION_TASK, type GenerationCheckpoint, type RetryCause } from "./generation-task.js";
export {
  assembleInstructions,
  type InstructionSection,
  type Instructions,
} from "./instructions.js";
export { DEFAULT_MODEL } from "./models.js";
export {
  DEFAULT_RETRY,
  retryDelay,
  thrownModelError,
  type RetryPolicy,
  type RetrySettings,
} from "./retry-policy.js";
export { TOOL_TASK, type ToolCheckpoint, type ToolTaskInput } from "./tool-task.js";
export type { GenerationInput } from "./placement.js";
export { Harness, type HarnessOptions, type HarnessSettings } from "./harness.js";
export { Conversation, type SubmitInput } from "./conversation.js";
export { Submission } from "./submission.js";
export type { ConversationView, ViewListener, ViewOps, WatchOptions } from "./watch.js";
