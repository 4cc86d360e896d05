import type { JsonObject } from "../domain/json.js";
import type { ReasoningPart, TextPart, ToolCallPart } from "../domain/records.js";
import type { ModelEvent } from "./model.js";

type Part = TextPart | ReasoningPart | ToolCallPart;

/**
 * The assistant message a model stream builds, part by part in the order
 * the model produced them: consecutive text deltas join one text part,
 * consecutive reasoning deltas of one reasoning block join one reasoning
 * part, each tool call is a part.
 */
export class AssistantDraft {
  private readonly parts: Part[] = [];
  private reasoningId: string | undefined;

  text(delta: string): void {
    if (delta === "") return;
    const last = this.parts.at(-1);
    if (last?.type === "text") last.text += delta;
    else this.parts.push({ type: "text", text: delta });
  }

  reasoning(event: Extract<ModelEvent, { type: "reasoning" }>): void {
    const last = this.parts.at(-1);
    let part: ReasoningPart;
    if (last?.type === "reasoning" && (event.id === undefined || event.id === this.reasoningId))
      part = last;
    else {
      if (event.delta === "" && event.providerMetadata === undefined) return;
      part = { type: "reasoning", text: "" };
      this.parts.push(part);
    }
    this.reasoningId = event.id;
    part.text += event.delta;
    if (event.providerMetadata !== undefined)
      part.providerMetadata = mergeMetadata(part.providerMetadata, event.providerMetadata);
  }

  toolCall(event: Extract<ModelEvent, { type: "toolCall" }>): ToolCallPart {
    const call: ToolCallPart = {
      type: "toolCall",
      id: event.id,
      name: event.name,
      arguments: event.arguments,
      ...(event.providerMetadata !== undefined ? { providerMetadata: event.providerMetadata } : {}),
    };
    this.parts.push(call);
    return call;
  }

  /** Every part so far. */
  content(): Part[] {
    return [...this.parts];
  }

  /** The tool calls so far, in order. */
  calls(): ToolCallPart[] {
    return this.parts.filter((p): p is ToolCallPart => p.type === "toolCall");
  }

  /** Text and reasoning only: what a failed turn may keep (its calls never ran). */
  withoutCalls(): (TextPart | ReasoningPart)[] {
    return this.parts.filter((p): p is TextPart | ReasoningPart => p.type !== "toolCall");
  }
}

/** Provider metadata arrives in pieces (a signature at the end of a block): merge by provider key. */
function mergeMetadata(into: JsonObject | undefined, more: JsonObject): JsonObject {
  const out: JsonObject = { ...into };
  for (const [key, value] of Object.entries(more)) {
    const old = out[key];
    out[key] =
      typeof old === "object" &&
      old !== null &&
      !Array.isArray(old) &&
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value)
        ? { ...old, ...value }
        : value;
  }
  return out;
}
