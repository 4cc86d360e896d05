import type { JsonObject } from "../domain/json.js";
import type { Message, StopReason } from "../domain/records.js";
import type { JsonSchema } from "./json-schema.js";

/** What a tool looks like to the model: its name, what it does and its arguments' JSON Schema. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/** One model call: the derived context (stored entries from the newest head marker on) and the tools on offer. */
export interface ModelRequest {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * What a model stream yields, in order: any number of text deltas and tool
 * calls, then exactly one `done` or `error` (nothing after it is read).
 */
export type ModelEvent =
  | { type: "text"; delta: string }
  | { type: "toolCall"; id: string; name: string; arguments: JsonObject }
  | { type: "done"; stopReason: StopReason; usage: ModelUsage }
  | { type: "error"; message: string; code?: string };

export interface ModelStreamOptions {
  /** Aborting stops the stream: the iterator rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The driven model port: everything the harness asks of a language model.
 * Provider adapters (HTTP APIs) implement it in their own packages; core
 * ships `ScriptedModel`.
 */
export interface Model {
  stream(request: ModelRequest, options?: ModelStreamOptions): AsyncIterable<ModelEvent>;
}
