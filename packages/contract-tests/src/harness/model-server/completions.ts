import type { ModelUsage, ScriptedError, ScriptedTurn } from "@durably/core";

/** One OpenAI chat-completions request body, as far as the server reads it. */
export interface CompletionRequest {
  model?: string;
  messages?: { role?: string; content?: unknown }[];
  [key: string]: unknown;
}

/** What the server does for one request: stream chunks, or answer with an HTTP error. */
export type Reply =
  | {
      type: "stream";
      /** `data:` payloads in order; `[DONE]` follows unless `end` is "cut" or "error". */
      chunks: object[];
      /** After the chunks: "done" (`data: [DONE]`), "cut" (destroy the socket), "error" (an error chunk, then end). */
      end: "done" | "cut" | "error";
      error?: object;
    }
  | { type: "status"; status: number; headers: Record<string, string>; body: object }
  | { type: "cut-before-response" };

const ARGUMENT_PIECE = 7;

function pointsOf(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function chunk(delta: object, finish: string | null = null): object {
  return {
    id: "chatcmpl-durably",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "durably-scripted",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function requestChars(body: CompletionRequest): number {
  let n = 0;
  for (const m of body.messages ?? [])
    n += typeof m.content === "string" ? m.content.length : JSON.stringify(m.content ?? "").length;
  return n;
}

function usageChunk(usage: ModelUsage): object {
  return {
    id: "chatcmpl-durably",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "durably-scripted",
    choices: [],
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
      ...(usage.cachedInputTokens !== undefined
        ? { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } }
        : {}),
      ...(usage.reasoningTokens !== undefined
        ? { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }
        : {}),
    },
  };
}

function errorBody(error: ScriptedError, type: string, code: string | undefined): object {
  return { error: { message: error.message, type, ...(code !== undefined ? { code } : {}) } };
}

/**
 * The HTTP answer a scripted failure becomes, the way OpenAI-compatible
 * servers fail: `code` "HTTP_<status>" picks the status; otherwise
 * `overflow` is a 400 `context_length_exceeded`, `auth` a 401, other
 * non-retryable errors a 400, retryable ones a 429 when `retryAfterMs` is
 * set (sent as `Retry-After` seconds when whole, else `retry-after-ms`)
 * and a 500 when not. `thrown` closes the connection instead. A failure
 * with `text` streams it first, then cuts the connection (retryable or
 * thrown) or sends an error chunk (otherwise).
 */
export function failureReply(error: ScriptedError, textChunks: object[]): Reply {
  if (error.text !== undefined && error.text !== "") {
    const retry = error.thrown === true || error.retryable === true;
    return retry
      ? { type: "stream", chunks: textChunks, end: "cut" }
      : {
          type: "stream",
          chunks: textChunks,
          end: "error",
          error: errorBody(error, "server_error", error.code),
        };
  }
  if (error.thrown) return { type: "cut-before-response" };
  const explicit = /^HTTP_(\d{3})$/.exec(error.code ?? "");
  let status: number;
  let type = "invalid_request_error";
  let code = error.code;
  if (explicit) {
    status = Number(explicit[1]);
    code = undefined;
    if (status >= 500) type = "server_error";
    if (status === 429) type = "rate_limit_error";
  } else if (error.kind === "overflow") {
    status = 400;
    code ??= "context_length_exceeded";
  } else if (error.kind === "auth") {
    status = 401;
    code ??= "invalid_api_key";
  } else if (error.retryable) {
    status = error.retryAfterMs !== undefined ? 429 : 500;
    type = status === 429 ? "rate_limit_error" : "server_error";
  } else status = 400;
  const headers: Record<string, string> = {};
  const wait = error.retryAfterMs;
  if (wait !== undefined) {
    if (wait % 1000 === 0) headers["retry-after"] = String(wait / 1000);
    else headers["retry-after-ms"] = String(wait);
  }
  return { type: "status", status, headers, body: errorBody(error, type, code) };
}

/**
 * The reply to a request for `turn`: reasoning (`reasoning_content`),
 * text, tool calls whose arguments arrive split in pieces, the finish
 * reason, a usage chunk, `[DONE]` — or the scripted failure.
 */
export function turnReply(
  turn: ScriptedTurn,
  turnIndex: number,
  body: CompletionRequest,
  chunkSize: number,
  failure: ScriptedError | undefined,
): Reply {
  const textChunks = (text: string, key: "content" | "reasoning_content"): object[] =>
    pointsOf(text, chunkSize).map((piece) => chunk({ [key]: piece }));
  if (failure) return failureReply(failure, textChunks(failure.text ?? "", "content"));
  const reasoning = turn.reasoning ?? "";
  const text = turn.text ?? "";
  const chunks: object[] = [
    chunk({ role: "assistant", content: "" }),
    ...textChunks(reasoning, "reasoning_content"),
    ...textChunks(text, "content"),
  ];
  if (turn.error !== undefined) {
    const error: ScriptedError =
      typeof turn.error === "string" ? { message: turn.error } : turn.error;
    return failureReply({ ...error, text: text === "" ? undefined : text }, chunks.slice(1));
  }
  const calls = turn.toolCalls ?? [];
  calls.forEach((call, i) => {
    const id = call.id ?? `call_${turnIndex + 1}_${i + 1}`;
    chunks.push(
      chunk({
        tool_calls: [
          { index: i, id, type: "function", function: { name: call.name, arguments: "" } },
        ],
      }),
    );
    for (const piece of pointsOf(JSON.stringify(call.arguments), ARGUMENT_PIECE))
      chunks.push(chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
  });
  const stop = turn.stopReason ?? (calls.length > 0 ? "toolUse" : "stop");
  chunks.push(chunk({}, calls.length > 0 ? "tool_calls" : stop === "length" ? "length" : "stop"));
  chunks.push(
    usageChunk(
      turn.usage ?? {
        inputTokens: requestChars(body),
        outputTokens: text.length + reasoning.length,
        ...(reasoning !== "" ? { reasoningTokens: reasoning.length } : {}),
      },
    ),
  );
  return { type: "stream", chunks, end: "done" };
}
