import { copyJson, type Json } from "../domain/json.js";
import type { ContentPart, ToolCallPart, ToolResultMessage } from "../domain/records.js";
import { checkContent } from "./content.js";
import { validateSchema } from "./json-schema.js";
import { standardValidate } from "./standard-schema.js";
import type { Tool, ToolApi } from "./tool.js";

/** A tool call's result: the message the model gets, and the `details` for UIs (never sent). */
export interface ToolCallOutcome {
  message: ToolResultMessage;
  details?: Json;
}

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
 * exception. The exceptions are aborts, so the caller decides what an
 * abort means (a user's abort, or a harness closing that must leave the
 * call to be resumed): when `api.signal` is already aborted as `execute`
 * would be called, `execute` is not called and the abort reason is thrown;
 * when `execute` throws while the signal is aborted, the abort reason is
 * thrown. A result `execute` returns is returned even if the signal
 * aborted meanwhile: the call happened, and that is what it did.
 */
export async function runToolCall(
  tools: ReadonlyMap<string, Tool>,
  call: ToolCallPart,
  api: ToolApi,
): Promise<ToolResultMessage> {
  return (await executeToolCall(tools, call, api)).message;
}

/**
 * The call's arguments as `execute` gets them: checked against the tool's
 * JSON Schema, or parsed by its Standard Schema (defaults and coercions
 * applied). `problem` is the error text the model reads when they are bad.
 */
export async function parseArguments(
  tool: Tool,
  call: ToolCallPart,
): Promise<{ args: unknown } | { problem: string }> {
  if (!tool.schema) return checkArguments(tool, call);
  const checked = await standardValidate(tool.schema, call.arguments, "arguments");
  if ("problem" in checked)
    return { problem: `error: invalid arguments for "${call.name}": ${checked.problem}` };
  return { args: checked.value };
}

/** `parseArguments` of a tool without a Standard Schema: synchronous (a JSON Schema check). */
function checkArguments(tool: Tool, call: ToolCallPart): { args: unknown } | { problem: string } {
  const violation = validateSchema(tool.parameters, call.arguments, "arguments");
  if (violation)
    return {
      problem: `error: invalid arguments for "${call.name}": ${violation.path}: ${violation.message}`,
    };
  return { args: call.arguments };
}

/** `runToolCall`, keeping the result's `details` (JSON for UIs) beside the message. */
export async function executeToolCall(
  tools: ReadonlyMap<string, Tool>,
  call: ToolCallPart,
  api: ToolApi,
): Promise<ToolCallOutcome> {
  const outcome = await callTool(tools, call, api);
  if (outcome === NOT_CALLED) throw api.signal.reason;
  return outcome;
}

/** What `callTool` resolves with when the signal was aborted before `execute` would be called. */
export const NOT_CALLED: unique symbol = Symbol("execute not called");

/**
 * `executeToolCall`, except that a signal already aborted when `execute`
 * would be called resolves `NOT_CALLED` rather than throwing, so the tool
 * task can record that the tool did not run (an abort reason thrown later
 * may come from `execute` itself).
 */
export async function callTool(
  tools: ReadonlyMap<string, Tool>,
  call: ToolCallPart,
  api: ToolApi,
): Promise<ToolCallOutcome | typeof NOT_CALLED> {
  const fail = (content: string): ToolCallOutcome => ({ message: result(call, content, true) });
  const tool = tools.get(call.name);
  if (!tool) {
    const known = [...tools.keys()].map((n) => JSON.stringify(n)).join(", ") || "none";
    return fail(`error: unknown tool "${call.name}" (available: ${known})`);
  }
  // No extra turn of the event loop for a JSON Schema tool: calls keep finishing in the order they did.
  const parsed = tool.schema ? await parseArguments(tool, call) : checkArguments(tool, call);
  if ("problem" in parsed) return fail(parsed.problem);
  const args = parsed.args;
  // Checked here, with no await before `execute`: an abort requested by now keeps the tool from running at all.
  if (api.signal.aborted) return NOT_CALLED;
  let outcome: unknown;
  try {
    outcome = await tool.execute(args as never, api);
  } catch (error) {
    if (api.signal.aborted) throw api.signal.reason;
    return fail(`error: ${call.name} threw ${errorText(error)}`);
  }
  // Not discarded when the signal aborted meanwhile: the tool ran, and its result is what happened.
  const read = readToolResult(call, outcome);
  return "problem" in read ? fail(`error: ${call.name} ${read.problem}`) : read;
}

/**
 * A tool result (what `execute`, or an `afterTool` hook, returned) as the
 * harness stores it; `problem` says what is wrong with a malformed one
 * ("returned … (why)").
 */
export function readToolResult(
  call: ToolCallPart,
  value: unknown,
): ToolCallOutcome | { problem: string } {
  const r = value as { content?: unknown; isError?: unknown; details?: unknown } | null;
  const shapeError = (why: string) => ({
    problem: `returned ${describe(value)}, not { content: string | parts, details?: JSON, isError?: boolean } (${why})`,
  });
  if (typeof r !== "object" || r === null) return shapeError("not an object");
  for (const key of Object.keys(r))
    if (key !== "content" && key !== "isError" && key !== "details")
      return shapeError(`${key} is not a result field`);
  if (r.isError !== undefined && typeof r.isError !== "boolean")
    return shapeError("isError is not a boolean");
  let content: string | ContentPart[];
  let details: Json | undefined;
  try {
    content = checkContent(r.content, "content");
    if (r.details !== undefined) details = copyJson(r.details, "details");
  } catch (error) {
    return shapeError((error as Error).message);
  }
  return {
    message: result(call, content, r.isError === true),
    ...(details !== undefined ? { details } : {}),
  };
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}
