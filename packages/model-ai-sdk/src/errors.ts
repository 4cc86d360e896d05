import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from "@ai-sdk/provider";
import { networkFailureCode, type ModelError } from "@durably/core";

/**
 * What providers say when the prompt does not fit the context window
 * (OpenAI and OpenAI-compatible servers such as vLLM, Anthropic, Google,
 * Mistral, Groq, xAI, Bedrock, llama.cpp), matched on the message, the
 * response body and the provider's error code.
 */
const OVERFLOW =
  /context[_ ]length|context[_ ]window|context size|maximum context|prompt is too long|input is too long|exceed(s|ed)? (the )?context limit|exceeds the maximum number of tokens|input token count|reduce the length of the messages|maximum prompt length|too many tokens in the prompt/i;

/**
 * Provider error codes and types that mean "try again later": OpenAI's
 * `rate_limit_exceeded` and `server_error`, Anthropic's `rate_limit_error`,
 * `overloaded_error` and `api_error` (its 500), Ollama's `api_error`, vLLM's
 * `InternalServerError` and `ServiceUnavailableError`, `internal_server_error`.
 */
const TRANSIENT_CODE =
  /rate_limit|overloaded|server_error|internal_?server_?error|api_error|unavailable|timeout|internal_error/i;

/**
 * Codes that look like a rate limit (OpenAI sends them with a 429) but mean
 * the account's quota or credit is used up: waiting does not help.
 */
const QUOTA_CODE = /^insufficient_quota$/i;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The error object itself: `{ error: { ... } }` (OpenAI, Anthropic, vLLM) or the value. */
function errorBody(data: unknown): Record<string, unknown> | undefined {
  const inner = isObject(data) && isObject(data.error) ? data.error : data;
  return isObject(inner) ? inner : undefined;
}

/** A provider code that is an HTTP status in disguise (`500`, `"429"`). */
function asStatus(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

/** The provider's own error codes, `code` before `type`: `{ error: { code, type } }` or `{ code, type }`. */
function providerCodes(data: unknown): string[] {
  const inner = errorBody(data);
  if (!inner) return [];
  const codes: string[] = [];
  for (const key of ["code", "type"] as const) {
    const value = inner[key];
    if (
      typeof value === "string" &&
      value !== "" &&
      value !== "error" &&
      asStatus(value) === undefined
    )
      codes.push(value);
  }
  return codes;
}

/** An HTTP status given as the error's `code` or `status` (vLLM's `code: 500`, a gateway's `"429"`). */
function providerStatus(data: unknown): number | undefined {
  const inner = errorBody(data);
  return inner ? (asStatus(inner.code) ?? asStatus(inner.status)) : undefined;
}

/** OpenAI's `insufficient_quota` (a 429 that no wait cures): refused, not retryable. */
function quotaError(codes: readonly string[], message: string): ModelError | undefined {
  const quota = codes.find((code) => QUOTA_CODE.test(code));
  return quota !== undefined
    ? { message, code: quota, kind: "invalid", retryable: false }
    : undefined;
}

/**
 * How long the provider asked to wait, from `retry-after-ms` (OpenAI) or
 * `Retry-After` (seconds, or an HTTP date), or `undefined`.
 */
export function retryAfterMs(
  headers: Readonly<Record<string, string | undefined>> | undefined,
  now: number,
): number | undefined {
  if (!headers) return undefined;
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v?.trim()]));
  const ms = lower.get("retry-after-ms");
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const after = lower.get("retry-after");
  if (after === undefined || after === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.ceil(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    return cause && !error.message.includes(cause) ? `${error.message}: ${cause}` : error.message;
  }
  if (isObject(error) && typeof error.message === "string") return error.message;
  if (isObject(error) && isObject(error.error) && typeof error.error.message === "string")
    return error.error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** 408, 429 and 5xx: the provider may answer a later try. */
function isTransientStatus(status: number | undefined): boolean {
  return status === 408 || status === 429 || (status ?? 0) >= 500;
}

function fromApiCall(error: APICallError, now: number): ModelError {
  const status = error.statusCode;
  const codes = providerCodes(error.data);
  const own = codes[0];
  // No response at all (a refused or reset connection): the network code (ECONNREFUSED, ...).
  const network = status === undefined ? networkFailureCode(error) : undefined;
  const code = own ?? (status !== undefined ? `HTTP_${status}` : network);
  // The AI SDK uses the status text when the body says nothing, and HTTP/2 has none: say the status.
  const message =
    error.message !== ""
      ? error.message
      : `HTTP ${status ?? "error"} with no message from the provider`;
  const base = { message, ...(code !== undefined ? { code } : {}) };
  const wait = retryAfterMs(error.responseHeaders, now);
  const retryable = { ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  const refusal = status === undefined || (status >= 400 && status < 500 && status !== 429);
  if (
    refusal &&
    !error.isRetryable &&
    OVERFLOW.test(`${error.message}\n${error.responseBody ?? ""}\n${own ?? ""}`)
  )
    return { ...base, kind: "overflow", retryable: false };
  if (status === 401 || status === 403) return { ...base, kind: "auth", retryable: false };
  const quota = quotaError(codes, message);
  if (quota) return quota;
  if (error.isRetryable || isTransientStatus(status) || network !== undefined)
    return { ...base, kind: "transient", retryable: true, ...retryable };
  if (status !== undefined && status >= 400 && status < 500)
    return { ...base, kind: "invalid", retryable: false };
  return { ...base, retryable: false };
}

/**
 * What a provider failure means for the harness: `retryable` for rate
 * limits (429, with `retryAfterMs` from the headers), server errors (5xx,
 * Anthropic's 529), timeouts and network failures (a refused connection, a
 * connection cut mid-stream); `kind` `overflow` for context-length errors,
 * `auth` for 401/403 and a missing API key, `invalid` for other 4xx, for
 * an exhausted quota (OpenAI's `insufficient_quota`, a 429 no wait cures)
 * and for responses the provider could not parse. Error chunks inside the
 * stream are judged by their code the same way, whether it is a word or an
 * HTTP status. Only the message and the
 * provider's error code are kept: never headers, URLs or request bodies.
 */
export function classifyError(error: unknown, now: number): ModelError {
  if (APICallError.isInstance(error)) return fromApiCall(error, now);
  if (LoadAPIKeyError.isInstance(error))
    return { message: error.message, code: "API_KEY_MISSING", kind: "auth", retryable: false };
  const network = networkFailureCode(error);
  if (network !== undefined)
    return {
      message: `network error: ${messageOf(error)}`,
      code: network,
      kind: "transient",
      retryable: true,
    };
  if (
    InvalidPromptError.isInstance(error) ||
    InvalidArgumentError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error) ||
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error)
  )
    return { message: error.message, code: error.name, kind: "invalid", retryable: false };
  return fromErrorChunk(error);
}

/**
 * A mid-stream error chunk: a plain `{ message, code?, type?, status? }` from
 * the provider's server, whose code may be a word (`overloaded_error`) or an
 * HTTP status (vLLM's `code: 500`, a gateway's `"429"`).
 */
function fromErrorChunk(error: unknown): ModelError {
  const message = messageOf(error);
  const codes = providerCodes(error);
  const status = providerStatus(error);
  const code = codes[0] ?? (status !== undefined ? `HTTP_${status}` : undefined);
  const withCode = code !== undefined ? { code } : {};
  if (OVERFLOW.test(`${message}\n${codes.join("\n")}`))
    return { message, ...withCode, kind: "overflow", retryable: false };
  const quota = quotaError(codes, message);
  if (quota) return quota;
  // A status says more than a word: Ollama calls every error `api_error`, a 400 among them.
  if (status === 401 || status === 403)
    return { message, ...withCode, kind: "auth", retryable: false };
  if (status !== undefined && status >= 400 && !isTransientStatus(status))
    return { message, ...withCode, kind: "invalid", retryable: false };
  if (codes.some((c) => TRANSIENT_CODE.test(c)) || isTransientStatus(status))
    return { message, ...withCode, kind: "transient", retryable: true };
  return { message, ...withCode, retryable: false };
}

/** Removes each secret (an API key, say) from the text, in case a provider echoed it. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}
