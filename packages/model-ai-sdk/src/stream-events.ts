import type {
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from "@ai-sdk/provider";
import { copyJson, type JsonObject, type ModelEvent, type ModelUsage } from "@durably/core";

type ErrorEvent = Extract<ModelEvent, { type: "error" }>;

/** How much of bad tool-call arguments an error message quotes. */
const QUOTE = 200;

function metadata(value: SharedV3ProviderMetadata | undefined): { providerMetadata?: JsonObject } {
  if (value === undefined || Object.keys(value).length === 0) return {};
  return { providerMetadata: copyJson(value, "providerMetadata") as JsonObject };
}

function usageOf(usage: LanguageModelV3Usage | undefined): ModelUsage {
  const cached = usage?.inputTokens.cacheRead;
  const reasoning = usage?.outputTokens.reasoning;
  return {
    inputTokens: usage?.inputTokens.total ?? 0,
    outputTokens: usage?.outputTokens.total ?? 0,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  };
}

/** The call's arguments as a JSON object, or the non-retryable error that says why not. */
export function parseArguments(
  input: string,
  name: string,
  id: string,
): { arguments: JsonObject } | { error: ErrorEvent } {
  const text = input.trim() === "" ? "{}" : input;
  let why: string;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return { arguments: copyJson(value, `tool call ${id} arguments`) as JsonObject };
    why = `they are ${Array.isArray(value) ? "an array" : `a ${value === null ? "null" : typeof value}`}, not a JSON object`;
  } catch (error) {
    why = `they are not valid JSON (${(error as Error).message})`;
  }
  const quoted = input.length > QUOTE ? `${input.slice(0, QUOTE)}…` : input;
  return {
    error: {
      type: "error",
      message: `the model called "${name}" (call ${id}) with arguments that cannot be used: ${why}; the arguments were ${JSON.stringify(quoted)}`,
      code: "INVALID_TOOL_CALL",
      kind: "invalid",
      retryable: false,
    },
  };
}

function finish(
  reason: LanguageModelV3FinishReason | string,
  usage: LanguageModelV3Usage | undefined,
): ModelEvent {
  const unified = typeof reason === "string" ? reason : reason.unified;
  const raw = typeof reason === "string" ? reason : reason.raw;
  switch (unified) {
    case "stop":
    case "other":
      return { type: "done", stopReason: "stop", usage: usageOf(usage) };
    case "length":
      return { type: "done", stopReason: "length", usage: usageOf(usage) };
    case "tool-calls":
      return { type: "done", stopReason: "toolUse", usage: usageOf(usage) };
    case "content-filter":
      return {
        type: "error",
        message: "the provider's content filter stopped the answer",
        code: "CONTENT_FILTER",
        kind: "invalid",
        retryable: false,
      };
    default:
      return {
        type: "error",
        message: `the provider ended the answer with finish reason ${JSON.stringify(raw ?? unified)}`,
        code: "FINISH_ERROR",
        retryable: false,
      };
  }
}

/**
 * Turns the AI SDK's stream parts into Durably model events, one part at a
 * time. Text and reasoning pass through as they arrive; a tool call is
 * emitted once complete (its `tool-call` part, or, if a provider sends only
 * the input pieces, the joined pieces at the end); `finish` becomes `done`
 * or an error. Parts with no Durably counterpart (stream metadata, sources,
 * files, raw chunks, provider-executed tools) are skipped.
 */
export class StreamTranslator {
  /** Tool inputs streamed in pieces, by id, until their call is emitted. */
  private readonly inputs = new Map<string, { name: string; text: string }>();
  private readonly emitted = new Set<string>();
  private readonly providerExecuted = new Set<string>();

  /**
   * Appends the events `part` makes to `out` (none, one, or, at `finish`,
   * the pending calls and the end). An array the caller reuses, not a
   * generator per part: this runs once per streamed chunk.
   */
  push(part: LanguageModelV3StreamPart, out: ModelEvent[]): void {
    switch (part.type) {
      case "text-delta":
        if (part.delta !== "") out.push({ type: "text", delta: part.delta });
        return;
      case "reasoning-start":
      case "reasoning-end":
        if (part.providerMetadata)
          out.push({
            type: "reasoning",
            delta: "",
            id: part.id,
            ...metadata(part.providerMetadata),
          });
        return;
      case "reasoning-delta":
        if (part.delta !== "" || part.providerMetadata)
          out.push({
            type: "reasoning",
            delta: part.delta,
            id: part.id,
            ...metadata(part.providerMetadata),
          });
        return;
      case "tool-input-start":
        if (part.providerExecuted) this.providerExecuted.add(part.id);
        else this.inputs.set(part.id, { name: part.toolName, text: "" });
        return;
      case "tool-input-delta": {
        const input = this.inputs.get(part.id);
        if (input) input.text += part.delta;
        return;
      }
      case "tool-call": {
        this.inputs.delete(part.toolCallId);
        if (part.providerExecuted || this.providerExecuted.has(part.toolCallId)) return;
        if (this.emitted.has(part.toolCallId)) return;
        out.push(this.call(part.toolCallId, part.toolName, part.input, part.providerMetadata));
        return;
      }
      case "finish": {
        for (const [id, input] of this.inputs) {
          const call = this.call(id, input.name, input.text, undefined);
          out.push(call);
          if (call.type === "error") return;
        }
        this.inputs.clear();
        out.push(finish(part.finishReason, part.usage));
        return;
      }
      default:
        return;
    }
  }

  private call(
    id: string,
    name: string,
    input: string,
    providerMetadata: SharedV3ProviderMetadata | undefined,
  ): ModelEvent {
    this.emitted.add(id);
    const parsed = parseArguments(input, name, id);
    if ("error" in parsed) return parsed.error;
    return {
      type: "toolCall",
      id,
      name,
      arguments: parsed.arguments,
      ...metadata(providerMetadata),
    };
  }

  /** The stream closed without a `finish` part. */
  ended(): ModelEvent {
    return {
      type: "error",
      message:
        "the provider's stream ended without a finish event, so the answer may be cut short; it is not used",
      code: "NO_FINISH",
      kind: "invalid",
      retryable: false,
    };
  }
}
