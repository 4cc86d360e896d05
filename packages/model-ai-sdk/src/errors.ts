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

/** Provider error codes and types (OpenAI `code`, Anthropic `error.type`) that mean "try again later". */
const TRANSIENT_CODE = /rate_limit|overloaded|server_error|unavailable|timeout|internal_error/i;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The provider's own error code: `{ error: { code | type } }` (OpenAI, Anthropic) or `{ code | type }`. */
function providerCode(data: unknown): string | undefined {
  const inner = isObject(data) && isObject(data.error) ? data.error : data;
  if (!isObject(inner)) return undefined;
  for (const key of ["code", "type"] as const) {
    const value = inner[key];
    if (typeof value === "string" && value !== "" && value !== "error") return value;
  }
  return undefined;
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

function fromApiCall(error: APICallError, now: number): ModelError {
  const status = error.statusCode;
  const own = providerCode(error.data);
  const code = own ?? (status !== undefined ? `HTTP_${status}` : undefined);
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
  if (error.isRetryable || status === 408 || status === 429 || (status ?? 0) >= 500)
    return { ...base, kind: "transient", retryable: true, ...retryable };
  if (networkFailureCode(error.cause) !== undefined)
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
 * `auth` for 401/403 and a missing API key, `invalid` for other 4xx and for
 * responses the provider could not parse. Only the message and the
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
  // A mid-stream error chunk: a plain `{ message, code?, type? }` from the provider's server.
  const message = messageOf(error);
  const code = providerCode(error);
  const withCode = code !== undefined ? { code } : {};
  if (OVERFLOW.test(`${message}\n${code ?? ""}`))
    return { message, ...withCode, kind: "overflow", retryable: false };
  if (code !== undefined && TRANSIENT_CODE.test(code))
    return { message, ...withCode, kind: "transient", retryable: true };
  return { message, ...withCode, retryable: false };
}

/** Removes each secret (an API key, say) from the text, in case a provider echoed it. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}
