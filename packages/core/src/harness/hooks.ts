import type { ConversationId } from "../domain/ids.js";
import { copyJson, type JsonObject } from "../domain/json.js";
import type { AssistantMessage, EntryRecord, ErrorInfo, ToolCallPart } from "../domain/records.js";
import type { ModelRequest } from "./model.js";
import type { ToolResult } from "./tool.js";
import { readToolResult, type ToolCallOutcome } from "./tool-call.js";

/** The `code` of a run that failed because a hook threw (reason `hook-failed`). */
export const HOOK_FAILED = "HOOK_FAILED";
/** The `code` of a run that failed because a hook returned something unusable (reason `hook-failed`). */
export const HOOK_INVALID = "HOOK_INVALID";
/** The `code` of a run whose conversation names hooks the harness does not have (reason `unknown-hooks`). */
export const UNKNOWN_HOOKS = "UNKNOWN_HOOKS";

/** What every hook is told: the conversation, and for tool hooks the call. */
export interface HookContext {
  readonly conversationId: ConversationId;
}

export interface ToolHookContext extends HookContext {
  readonly toolCallId: string;
  readonly toolName: string;
  /** 1, then 2, 3... when a safe tool reruns after a crash. */
  readonly attempt: number;
}

/**
 * Plain functions around a run's steps (code, never stored). A hook that
 * throws fails the run, its error the run's detail (reason `hook-failed`),
 * and nothing of the step it was in is stored.
 */
export interface Hooks {
  /** Sees (a copy of) each model request; returns the request to send (`undefined`: the copy, as changed). */
  beforeRequest?(
    request: ModelRequest,
    context: HookContext,
  ): ModelRequest | undefined | Promise<ModelRequest | undefined>;
  /** Sees each complete answer before it is stored. */
  afterResponse?(message: AssistantMessage, context: HookContext): void | Promise<void>;
  /** Before a tool runs: `{ block: reason }` stops it; the model gets "blocked: <reason>". */
  beforeTool?(
    call: ToolCallPart,
    context: ToolHookContext,
  ): { block: string } | undefined | Promise<{ block: string } | undefined>;
  /** After a tool ran: returns the result to store (`undefined`: unchanged). */
  afterTool?(
    call: ToolCallPart,
    result: ToolResult,
    context: ToolHookContext,
  ): ToolResult | undefined | Promise<ToolResult | undefined>;
}

const HOOK_NAMES = ["beforeRequest", "afterResponse", "beforeTool", "afterTool"] as const;

/** Checks one set of hooks (`where` names it); a `TypeError` names a bad field. */
export function checkHooks(value: unknown, where: string): Hooks {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError(`${where} must be an object of hook functions (${HOOK_NAMES.join(", ")})`);
  for (const [key, hook] of Object.entries(value)) {
    if (!(HOOK_NAMES as readonly string[]).includes(key))
      throw new TypeError(`${where}: ${key} is not a hook (${HOOK_NAMES.join(", ")})`);
    if (typeof hook !== "function") throw new TypeError(`${where}.${key} must be a function`);
  }
  return value;
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

function thrown(hook: string, error: unknown): { error: ErrorInfo } {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return {
    error: { name: "HookFailed", message: `the ${hook} hook threw ${text}`, code: HOOK_FAILED },
  };
}

function invalid(hook: string, why: string): { error: ErrorInfo } {
  return { error: { name: "HookInvalid", message: `the ${hook} hook ${why}`, code: HOOK_INVALID } };
}

/** Each `beforeRequest` in turn; the request the last one returned, or the error that stops the run. */
export async function beforeRequest(
  hooks: readonly Hooks[],
  request: ModelRequest,
  context: HookContext,
): Promise<{ request: ModelRequest } | { error: ErrorInfo }> {
  let current = request;
  for (const hooked of hooks) {
    if (!hooked.beforeRequest) continue;
    const copy = copyJson(current, "request") as unknown as ModelRequest;
    let returned: unknown;
    try {
      returned = await hooked.beforeRequest(copy, context);
    } catch (error) {
      return thrown("beforeRequest", error);
    }
    const next = returned === undefined ? copy : returned;
    let checked: JsonObject;
    try {
      checked = copyJson(next, "request") as JsonObject;
    } catch (error) {
      return invalid(
        "beforeRequest",
        `returned a request that is not JSON: ${(error as Error).message}`,
      );
    }
    if (typeof checked !== "object" || checked === null || Array.isArray(checked))
      return invalid("beforeRequest", "returned something that is not a request object");
    if (!Array.isArray(checked.messages) || !Array.isArray(checked.tools))
      return invalid("beforeRequest", "returned a request without messages and tools arrays");
    if (checked.conversationId !== current.conversationId)
      return invalid(
        "beforeRequest",
        `changed the request's conversationId (${String(current.conversationId)} to ${JSON.stringify(checked.conversationId)})`,
      );
    current = checked as unknown as ModelRequest;
  }
  return { request: current };
}

/** Each `afterResponse` in turn; the error that stops the run, if one throws. */
export async function afterResponse(
  hooks: readonly Hooks[],
  message: AssistantMessage,
  context: HookContext,
): Promise<{ error: ErrorInfo } | undefined> {
  for (const hooked of hooks) {
    if (!hooked.afterResponse) continue;
    try {
      await hooked.afterResponse(copyJson(message, "message") as AssistantMessage, context);
    } catch (error) {
      return thrown("afterResponse", error);
    }
  }
  return undefined;
}

/** Each `beforeTool` in turn: the first `{ block }` wins. */
export async function beforeTool(
  hooks: readonly Hooks[],
  call: ToolCallPart,
  context: ToolHookContext,
): Promise<{ block: string } | { error: ErrorInfo } | undefined> {
  for (const hooked of hooks) {
    if (!hooked.beforeTool) continue;
    let verdict: unknown;
    try {
      verdict = await hooked.beforeTool(copyJson(call, "call") as ToolCallPart, context);
    } catch (error) {
      return thrown("beforeTool", error);
    }
    if (verdict === undefined) continue;
    const block =
      typeof verdict === "object" && verdict !== null && "block" in verdict
        ? verdict.block
        : undefined;
    if (typeof block !== "string")
      return invalid(
        "beforeTool",
        `returned ${describeValue(verdict)}, not undefined or { block: reason }`,
      );
    return { block };
  }
  return undefined;
}

/** Each `afterTool` in turn, each given the result the previous one returned. */
export async function afterTool(
  hooks: readonly Hooks[],
  call: ToolCallPart,
  outcome: ToolCallOutcome,
  context: ToolHookContext,
): Promise<{ outcome: ToolCallOutcome } | { error: ErrorInfo }> {
  let current = outcome;
  for (const hooked of hooks) {
    if (!hooked.afterTool) continue;
    const given: ToolResult = {
      content: current.message.content,
      ...(current.message.isError ? { isError: true } : {}),
      ...(current.details !== undefined ? { details: current.details } : {}),
    };
    let returned: unknown;
    try {
      returned = await hooked.afterTool(
        copyJson(call, "call") as ToolCallPart,
        copyJson(given, "result") as unknown as ToolResult,
        context,
      );
    } catch (error) {
      return thrown("afterTool", error);
    }
    if (returned === undefined) continue;
    const read = readToolResult(call, returned);
    if ("problem" in read) return invalid("afterTool", read.problem);
    current = read;
  }
  return { outcome: current };
}

/**
 * The error a tool hook stored with this round's results (`data.hookFailed`
 * of a tool-result entry after the newest assistant entry), if any: the
 * generation then ends the run with it instead of calling the model.
 */
export function toolHookFailure(entries: readonly EntryRecord[]): ErrorInfo | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as EntryRecord;
    if (entry.kind === "durably.assistant") return undefined;
    const failed = (entry.data as { hookFailed?: ErrorInfo } | undefined)?.hookFailed;
    if (failed !== undefined) return failed;
  }
  return undefined;
}
