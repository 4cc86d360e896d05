import type { SubmissionId, TaskId } from "../domain/ids.js";
import type { JsonObject } from "../domain/json.js";
import type { AssistantMessage, ContentPart, ToolResultMessage } from "../domain/records.js";
import type { AppendEntryInput } from "../session/transaction.js";
import type { ModelUsage } from "./model.js";

/** Entry kinds the harness writes. */
export const USER_ENTRY = "durably.user";
export const ASSISTANT_ENTRY = "durably.assistant";
export const TOOL_RESULT_ENTRY = "durably.tool-result";

/** A placed input: the user's message, tagged with its submission. */
export function userEntry(
  submissionId: SubmissionId,
  content: string | ContentPart[],
): AppendEntryInput {
  return {
    kind: USER_ENTRY,
    model: [{ role: "user", content }],
    data: { submissionId },
  };
}

/** A call's usage as entries store it (`data.usage`): the counts the model reported, and the cost when priced. */
export function usageData(usage: ModelUsage, cost: number | undefined): JsonObject {
  const { inputTokens, outputTokens, cachedInputTokens, reasoningTokens } = usage;
  return {
    inputTokens,
    outputTokens,
    ...(cachedInputTokens !== undefined ? { cachedInputTokens } : {}),
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
    ...(cost !== undefined ? { cost } : {}),
  };
}

/**
 * A model turn, written by its generation task: `data.usage` when the
 * model reported it, `data.model` the name of the model that answered.
 */
export function assistantEntry(
  generationTaskId: TaskId,
  message: AssistantMessage,
  answered?: { model: string; usage: ModelUsage; cost: number | undefined },
): AppendEntryInput {
  return {
    kind: ASSISTANT_ENTRY,
    model: [message],
    byTaskId: generationTaskId,
    ...(answered
      ? { data: { model: answered.model, usage: usageData(answered.usage, answered.cost) } }
      : {}),
  };
}

/** A tool call's result, written by its tool task in the commit that makes it terminal. */
export function toolResultEntry(
  toolTaskId: TaskId,
  message: ToolResultMessage,
  data: JsonObject,
): AppendEntryInput {
  return { kind: TOOL_RESULT_ENTRY, model: [message], byTaskId: toolTaskId, data };
}
