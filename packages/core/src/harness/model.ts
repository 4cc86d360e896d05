import type { ConversationId } from "../domain/ids.js";
import type { Json, JsonObject } from "../domain/json.js";
import type { Message, StopReason } from "../domain/records.js";
import type { JsonSchema } from "./json-schema.js";

/** What a tool looks like to the model: its name, what it does and its arguments' JSON Schema. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/**
 * Generation settings sent with a request. The named ones are common to
 * most providers; an adapter may accept more (it says which in its README)
 * and must refuse, with an `invalid` error event, a key it does not know,
 * rather than drop it.
 */
export interface ModelSettings {
  maxOutputTokens?: number;
  temperature?: number;
  [key: string]: Json | undefined;
}

/** One model call: instructions, the derived context, the tools on offer and the settings. */
export interface ModelRequest {
  /** The instructions (system prompt), already assembled; absent when there are none. */
  readonly system?: string;
  /** The derived context: user, assistant and tool-result messages, oldest first. */
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
  readonly settings?: ModelSettings;
  /** The conversation asking, so an adapter can key provider-side prompt caches by it. */
  readonly conversationId: ConversationId;
  /**
   * What the call is for: absent for an answer (the model sees the
   * conversation and may call tools); `"compaction"` when the harness asks
   * for a summary of earlier messages (no tools; the one user message holds
   * the transcript to summarise). Adapters may ignore it.
   */
  readonly purpose?: "compaction";
}

/**
 * What a model costs, in whatever unit the numbers are in (the usage
 * ledger adds them up and never converts): the price of a million tokens.
 */
export interface ModelPrices {
  /** A million input tokens not read from the prompt cache. */
  inputPerMillion: number;
  /** A million output tokens (reasoning tokens included: they are output). */
  outputPerMillion: number;
  /** A million input tokens read from the prompt cache (default: `inputPerMillion`). */
  cachedInputPerMillion?: number;
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the provider read from its prompt cache (part of `inputTokens`). */
  cachedInputTokens?: number;
  /** Output tokens spent on reasoning (part of `outputTokens`). */
  reasoningTokens?: number;
}

/**
 * What kind of failure an error event reports:
 * - `overflow`: the request is longer than the model's context window;
 * - `auth`: the credentials were refused (401, 403, a missing key);
 * - `invalid`: the provider refused the request or sent something unusable
 *   (400, a malformed tool call); sending it again gets the same answer;
 * - `transient`: rate limits (429), server errors (5xx), network failures.
 */
export type ModelErrorKind = "overflow" | "auth" | "invalid" | "transient";

/** The failure of one model call, as an error event carries it. */
export interface ModelError {
  message: string;
  code?: string;
  /** Sending the same request again later may succeed (429, 5xx, network). */
  retryable?: boolean;
  /** How long the provider asked to wait before trying again (from `Retry-After`). */
  retryAfterMs?: number;
  kind?: ModelErrorKind;
}

/**
 * What a model stream yields, in order: any number of text deltas,
 * reasoning deltas and tool calls, then exactly one `done` or `error`
 * (nothing after it is read).
 *
 * Reasoning deltas with the same `id` (or none) continue one reasoning part;
 * a new `id` starts another. `providerMetadata` on a reasoning delta (it may
 * come with an empty delta) is merged into its part.
 */
export type ModelEvent =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string; id?: string; providerMetadata?: JsonObject }
  | {
      type: "toolCall";
      id: string;
      name: string;
      arguments: JsonObject;
      providerMetadata?: JsonObject;
    }
  | { type: "done"; stopReason: StopReason; usage: ModelUsage }
  | ({ type: "error" } & ModelError);

export interface ModelStreamOptions {
  /** Aborting stops the stream: the iterator rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The driven model port: everything the harness asks of a language model.
 * Provider adapters implement it in their own packages (`@durably/model-ai-sdk`
 * for every Vercel AI SDK provider); core ships `ScriptedModel`.
 *
 * A failure should be an `error` event saying whether it is `retryable`;
 * a stream that throws instead is treated as a network failure (retried)
 * when the error carries a network error code (`ECONNRESET`, ...) or is a
 * fetch `TypeError`, and as a non-retryable error otherwise.
 */
export interface Model {
  stream(request: ModelRequest, options?: ModelStreamOptions): AsyncIterable<ModelEvent>;
  /**
   * Tokens the model's context holds, when the adapter knows it: automatic
   * compaction starts once a request's input passes `contextWindow ×
   * threshold`. A registration's own `contextWindow` wins.
   */
  readonly contextWindow?: number;
  /** What the model costs, for the usage ledger; a registration's own `prices` win. */
  readonly prices?: ModelPrices;
}
