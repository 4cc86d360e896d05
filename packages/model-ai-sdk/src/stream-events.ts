import { copyJson, type JsonObject, type ModelEvent, type ModelUsage } from "@durably/core";

type ErrorEvent = Extract<ModelEvent, { type: "error" }>;

/** How much of bad tool-call arguments an error message quotes. */
const QUOTE = 200;

/** A field of a stream part that breaks the specification: the part is unusable. */
class MalformedPart extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (typeof value === "number") return String(value);
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** `value[field]` if it is a string, else the `MalformedPart` error naming the field. */
function stringField(value: Record<string, unknown>, field: string, path = ""): string {
  const found = value[field];
  if (typeof found !== "string")
    throw new MalformedPart(`${path}${field} is ${describe(found)}, not a string`);
  return found;
}

function metadata(value: unknown): { providerMetadata?: JsonObject } {
  if (value === undefined || value === null) return {};
  if (!isObject(value))
    throw new MalformedPart(`providerMetadata is ${describe(value)}, not an object`);
  if (Object.keys(value).length === 0) return {};
  try {
    return { providerMetadata: copyJson(value, "providerMetadata") as JsonObject };
  } catch (error) {
    throw new MalformedPart((error as Error).message);
  }
}

/** A reported token count, or `undefined` when it is absent (`undefined`, `null`). */
function tokens(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw new MalformedPart(`${path} is ${describe(value)}, not a non-negative number`);
  return value;
}

/**
 * A token count: absent (`undefined`, `null`, or its whole group missing)
 * means the provider did not report it; present, it must be a count.
 */
function count(group: unknown, groupName: string, field: string): number | undefined {
  if (group === undefined || group === null) return undefined;
  if (!isObject(group))
    throw new MalformedPart(`usage.${groupName} is ${describe(group)}, not an object`);
  return tokens(group[field], `usage.${groupName}.${field}`);
}

/**
 * A group's total and detail: `{ total, [detail] }` (specification v3), or
 * a flat count (v2, sent with a bare-string finish reason) whose detail is
 * the flat `usage[flatDetail]`.
 */
function group(
  usage: Record<string, unknown> | undefined,
  name: string,
  detail: string,
  flatDetail: string,
): { total: number; detail: number | undefined } {
  const value = usage?.[name];
  if (typeof value === "number")
    return {
      total: tokens(value, `usage.${name}`) ?? 0,
      detail: tokens(usage?.[flatDetail], `usage.${flatDetail}`),
    };
  return { total: count(value, name, "total") ?? 0, detail: count(value, name, detail) };
}

/** Unreported totals count as 0, unreported cached and reasoning tokens are left out. */
function usageOf(usage: unknown): ModelUsage {
  if (usage !== undefined && usage !== null && !isObject(usage))
    throw new MalformedPart(`usage is ${describe(usage)}, not an object`);
  const given = isObject(usage) ? usage : undefined;
  const input = group(given, "inputTokens", "cacheRead", "cachedInputTokens");
  const output = group(given, "outputTokens", "reasoning", "reasoningTokens");
  return {
    inputTokens: input.total,
    outputTokens: output.total,
    ...(input.detail !== undefined ? { cachedInputTokens: input.detail } : {}),
    ...(output.detail !== undefined ? { reasoningTokens: output.detail } : {}),
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

function finish(reason: unknown, usage: unknown): ModelEvent {
  let unified: string;
  let raw: unknown;
  // A bare string is a finish reason of specification v2, which some providers still send.
  if (typeof reason === "string") unified = raw = reason;
  else if (isObject(reason)) {
    unified = stringField(reason, "unified", "finishReason.");
    raw = reason.raw;
  } else throw new MalformedPart(`finishReason is ${describe(reason)}, not an object`);
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
        message: `the provider ended the answer with finish reason ${JSON.stringify(typeof raw === "string" ? raw : unified)}`,
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
   * generator per part: this runs once per streamed chunk. A part that
   * breaks the specification (not an object, a delta that is not a string,
   * provider metadata that is not JSON, a token count that is not a number)
   * appends only the `INVALID_STREAM_PART` error naming the part and field.
   */
  push(part: unknown, out: ModelEvent[]): void {
    const before = out.length;
    try {
      if (!isObject(part)) throw new MalformedPart(`the part is ${describe(part)}, not an object`);
      if (typeof part.type !== "string")
        throw new MalformedPart(`type is ${describe(part.type)}, not a string`);
      this.translate(part, out);
    } catch (error) {
      out.length = before;
      const type = isObject(part) && typeof part.type === "string" ? `"${part.type}" ` : "";
      out.push({
        type: "error",
        message: `the provider sent a malformed ${type}stream part: ${(error as Error).message}`,
        code: "INVALID_STREAM_PART",
        kind: "invalid",
        retryable: false,
      });
    }
  }

  private translate(part: Record<string, unknown>, out: ModelEvent[]): void {
    switch (part.type) {
      case "text-delta": {
        const delta = stringField(part, "delta");
        if (delta !== "") out.push({ type: "text", delta });
        return;
      }
      case "reasoning-start":
      case "reasoning-end": {
        const id = stringField(part, "id");
        const meta = metadata(part.providerMetadata);
        if (meta.providerMetadata) out.push({ type: "reasoning", delta: "", id, ...meta });
        return;
      }
      case "reasoning-delta": {
        const id = stringField(part, "id");
        const delta = stringField(part, "delta");
        const meta = metadata(part.providerMetadata);
        if (delta !== "" || meta.providerMetadata)
          out.push({ type: "reasoning", delta, id, ...meta });
        return;
      }
      case "tool-input-start": {
        const id = stringField(part, "id");
        if (part.providerExecuted) this.providerExecuted.add(id);
        else this.inputs.set(id, { name: stringField(part, "toolName"), text: "" });
        return;
      }
      case "tool-input-delta": {
        const id = stringField(part, "id");
        const delta = stringField(part, "delta");
        const input = this.inputs.get(id);
        if (input) input.text += delta;
        return;
      }
      case "tool-call": {
        const id = stringField(part, "toolCallId");
        this.inputs.delete(id);
        if (part.providerExecuted || this.providerExecuted.has(id)) return;
        if (this.emitted.has(id)) return;
        const name = stringField(part, "toolName");
        const input = stringField(part, "input");
        const meta = metadata(part.providerMetadata);
        out.push(this.call(id, name, input, meta));
        return;
      }
      case "finish": {
        // Checked first: a bad finish part is reported as such, not after the pending calls.
        const end = finish(part.finishReason, part.usage);
        for (const [id, input] of this.inputs) {
          const call = this.call(id, input.name, input.text, {});
          out.push(call);
          if (call.type === "error") return;
        }
        this.inputs.clear();
        out.push(end);
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
    meta: { providerMetadata?: JsonObject },
  ): ModelEvent {
    this.emitted.add(id);
    const parsed = parseArguments(input, name, id);
    if ("error" in parsed) return parsed.error;
    return { type: "toolCall", id, name, arguments: parsed.arguments, ...meta };
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
