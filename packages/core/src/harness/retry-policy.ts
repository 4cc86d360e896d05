import type { ModelError } from "./model.js";
import { refuseUnknownFields, setFields } from "../domain/option-keys.js";

/** How failed model calls are retried (durably: a retry survives a restart). */
export interface RetrySettings {
  /** Most model calls per round, the first included (default 5; 1 turns retries off). */
  maxAttempts?: number;
  /** Wait before the second attempt; each later wait doubles (default 1,000 ms). */
  initialDelayMs?: number;
  /** Longest wait; a provider asking for longer (`Retry-After`) is not retried (default 30,000 ms). */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetrySettings>;

/** Where the settings are given: every refusal starts with it. */
const WHERE = "Harness.open: settings";

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
};

/** Checks `settings.retry`, filling in defaults; a `TypeError` names the bad field. */
export function retryPolicy(settings: unknown): RetryPolicy {
  if (settings === undefined) return DEFAULT_RETRY;
  if (typeof settings !== "object" || settings === null || Array.isArray(settings))
    throw new TypeError(
      "Harness.open: settings.retry: must be { maxAttempts?, initialDelayMs?, maxDelayMs? }",
    );
  const s = settings as Record<string, unknown>;
  refuseUnknownFields(s, Object.keys(DEFAULT_RETRY), `${WHERE}.retry`, "a retry setting");
  const policy = { ...DEFAULT_RETRY, ...setFields(s as RetrySettings) };
  if (!Number.isSafeInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new TypeError(`${WHERE}.retry.maxAttempts: must be an integer of at least 1`);
  for (const key of ["initialDelayMs", "maxDelayMs"] as const)
    if (!(typeof policy[key] === "number" && Number.isFinite(policy[key]) && policy[key] >= 0))
      throw new TypeError(`${WHERE}.retry.${key}: must be a non-negative number of milliseconds`);
  if (policy.initialDelayMs > policy.maxDelayMs)
    throw new TypeError(
      `${WHERE}.retry.initialDelayMs (${policy.initialDelayMs}) is above maxDelayMs (${policy.maxDelayMs})`,
    );
  return policy;
}

/**
 * The wait before attempt `next` (2, 3, ...): `initialDelayMs` doubled for
 * each attempt after the second, capped at `maxDelayMs`, with "equal
 * jitter" (between half and all of it, so processes retrying together
 * spread out), and never shorter than the provider's `retryAfterMs`.
 * `undefined` when the provider asked for more than `maxDelayMs`.
 */
export function retryDelay(
  policy: RetryPolicy,
  next: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) return undefined;
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, next - 2));
  const jittered = Math.round(base / 2 + (random() * base) / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/**
 * The network failure in `error` or its causes (five links at most): a
 * socket, DNS or undici error code, or `"NETWORK"` for fetch's `TypeError`
 * "fetch failed" / "terminated"; `undefined` when it is no network failure.
 * Model adapters use it to classify what their provider threw.
 */
export function networkFailureCode(error: unknown): string | undefined {
  let fetchFailed = false;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const c = current as { code?: unknown; cause?: unknown; message?: unknown };
    if (typeof c.code === "string" && NETWORK_CODES.has(c.code)) return c.code;
    if (
      current instanceof TypeError &&
      (c.message === "fetch failed" || c.message === "terminated")
    )
      fetchFailed = true;
    current = c.cause;
  }
  return fetchFailed ? "NETWORK" : undefined;
}

/**
 * What an exception out of `model.stream` means: a network failure (a
 * socket or DNS error code in the error or its causes, or fetch's
 * `TypeError` "fetch failed" / "terminated") is retryable; anything else
 * (a bug in a Model, a provider that throws) is not.
 */
export function thrownModelError(error: unknown): ModelError {
  const name = error instanceof Error ? error.name : "Error";
  const message =
    error instanceof Error
      ? error.message
      : typeof error === "string"
        ? error
        : (JSON.stringify(error) ?? String(error));
  const code = networkFailureCode(error);
  if (code !== undefined) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return {
      message: `the model call failed: ${name}: ${message}${cause}`,
      code,
      kind: "transient",
      retryable: true,
    };
  }
  return { message: `the model threw ${name}: ${message}`, code: "MODEL_THREW", retryable: false };
}
