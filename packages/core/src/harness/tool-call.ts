import type { ContentPart, ToolCallPart, ToolResultMessage } from "../domain/records.js";
import { checkContent } from "./content.js";
import { validateSchema } from "./json-schema.js";
import type { Tool, ToolApi } from "./tool.js";

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function result(
  call: ToolCallPart,
  content: string | ContentPart[],
  isError: boolean,
): ToolResultMessage {
  return { role: "toolResult", toolCallId: call.id, toolName: call.name, content, isError };
}

/**
 * Runs one tool call to a tool-result message. Everything the model got
 * wrong (an unknown tool, arguments that break the schema) and everything
 * the tool threw becomes an error result for the model to read, never an
 * exception. The one exception: when `api.signal` is aborted, the abort
 * reason is thrown, so the caller decides what an abort means (a user's
 * abort, or a harness closing that must leave the call to be resumed).
 */
export async function runToolCall(
  tools: ReadonlyMap<string, Tool>,
  call: ToolCallPart,
  api: ToolApi,
): Promise<ToolResultMessage> {
  const tool = tools.get(call.name);
  if (!tool) {
    const known = [...tools.keys()].map((n) => JSON.stringify(n)).join(", ") || "none";
    return result(call, `error: unknown tool "${call.name}" (available: ${known})`, true);
  }
  const violation = validateSchema(tool.parameters, call.arguments, "arguments");
  if (violation)
    return result(
      call,
      `error: invalid arguments for "${call.name}": ${violation.path}: ${violation.message}`,
      true,
    );
  let outcome: unknown;
  try {
    outcome = await tool.execute(call.arguments, api);
  } catch (error) {
    if (api.signal.aborted) throw api.signal.reason;
    return result(call, `error: ${call.name} threw ${errorText(error)}`, true);
  }
  api.signal.throwIfAborted();
  const r = outcome as { content?: unknown; isError?: unknown } | null;
  const shapeError = (why: string): ToolResultMessage =>
    result(
      call,
      `error: ${call.name} returned ${JSON.stringify(outcome) ?? String(outcome)}, not { content: string | parts, isError?: boolean } (${why})`,
      true,
    );
  if (typeof r !== "object" || r === null) return shapeError("not an object");
  if (r.isError !== undefined && typeof r.isError !== "boolean")
    return shapeError("isError is not a boolean");
  let content: string | ContentPart[];
  try {
    content = checkContent(r.content, "content");
  } catch (error) {
    return shapeError((error as Error).message);
  }
  return result(call, content, r.isError === true);
}
