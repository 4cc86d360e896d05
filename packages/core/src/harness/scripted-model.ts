import { copyJson, type JsonObject } from "../domain/json.js";
import type { StopReason } from "../domain/records.js";
import { contentText } from "./content.js";
import { refuseUnknownFields } from "../domain/option-keys.js";
import type {
  Model,
  ModelError,
  ModelEvent,
  ModelRequest,
  ModelStreamOptions,
  ModelUsage,
} from "./model.js";

export interface ScriptedToolCall {
  /** Default `call_<turn>_<index>` (1-based), stable across restarts. */
  id?: string;
  name: string;
  arguments: JsonObject;
}

/**
 * A scripted failure: the error event a model call ends with (after
 * `text`, if given), or, with `thrown`, an exception from the stream, the
 * way a network failure surfaces from a fetch.
 */
export interface ScriptedError extends ModelError {
  /** Streamed before the failure (a partial answer the failure cuts short). */
  text?: string;
  /** Throw a `TypeError("fetch failed")` whose `cause.code` is `code` (default ECONNRESET) instead of yielding an error event. */
  thrown?: boolean;
}

/** One scripted answer: streamed reasoning, then text, then tool calls, then `done` (or `error`). */
export interface ScriptedTurn {
  text?: string;
  /** Streamed as reasoning deltas before the text; kept on the assistant message. */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default "toolUse" when the turn calls tools, else "stop". */
  stopReason?: StopReason;
  /** The turn always ends with this error (a string is `{ message }`), after its text. */
  error?: string | ScriptedError;
  /**
   * The first `failures.length` requests this model instance gets for the
   * turn fail, in order, with these; later ones answer normally. (Counted
   * per instance: a new process starts counting afresh.)
   */
  failures?: ScriptedError[];
  /** Default: characters in (the request's system and messages, this turn's output). */
  usage?: ModelUsage;
}

export interface ScriptedModelOptions {
  /** Pause between text chunks, so streaming is observable (default 0: no timer at all). */
  chunkDelayMs?: number;
  /** Code points per text chunk (default 4). */
  chunkSize?: number;
  /** What a compaction request (`purpose: "compaction"`) is answered with, streamed (default `SCRIPTED_SUMMARY`). */
  summary?: string;
  /** The first compaction requests this instance gets fail, in order, with these. */
  summaryFailures?: ScriptedError[];
}

/** The summary a `ScriptedModel` (and the test model server) gives when its script names none. */
export const SCRIPTED_SUMMARY = "Summary of the earlier conversation.";

const STOP_REASONS = new Set<string>(["stop", "toolUse", "length", "error", "aborted"]);
const ERROR_KINDS = new Set<string>(["overflow", "auth", "invalid", "transient"]);
const TURN_FIELDS = ["text", "reasoning", "toolCalls", "stopReason", "error", "failures", "usage"];
const ERROR_FIELDS = ["message", "code", "retryable", "retryAfterMs", "kind", "text", "thrown"];
const USAGE_FIELDS = ["inputTokens", "outputTokens", "cachedInputTokens", "reasoningTokens"];

function checkError(value: unknown, where: string): ScriptedError {
  if (typeof value === "string") return { message: value };
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError(`${where}: must be a message string or { message, ... }`);
  const e = value as Record<string, unknown>;
  refuseUnknownFields(e, ERROR_FIELDS, where, "an error field");
  if (typeof e.message !== "string") throw new TypeError(`${where}.message: must be a string`);
  for (const key of ["code", "text"] as const)
    if (e[key] !== undefined && typeof e[key] !== "string")
      throw new TypeError(`${where}.${key}: must be a string`);
  for (const key of ["retryable", "thrown"] as const)
    if (e[key] !== undefined && typeof e[key] !== "boolean")
      throw new TypeError(`${where}.${key}: must be a boolean`);
  if (
    e.retryAfterMs !== undefined &&
    !(typeof e.retryAfterMs === "number" && Number.isFinite(e.retryAfterMs) && e.retryAfterMs >= 0)
  )
    throw new TypeError(`${where}.retryAfterMs: must be a non-negative number`);
  if (e.kind !== undefined && !ERROR_KINDS.has(e.kind as string))
    throw new TypeError(`${where}.kind: must be one of ${[...ERROR_KINDS].join(", ")}`);
  return { ...(e as unknown as ScriptedError) };
}

function checkUsage(value: unknown, where: string): ModelUsage {
  const u = value as Record<string, unknown> | null;
  if (typeof u !== "object" || u === null || Array.isArray(u))
    throw new TypeError(`${where}: must be { inputTokens, outputTokens } integers`);
  refuseUnknownFields(u, USAGE_FIELDS, where, "a usage field");
  for (const key of USAGE_FIELDS) {
    const n = u[key];
    const optional = key === "cachedInputTokens" || key === "reasoningTokens";
    if ((n !== undefined || !optional) && !(Number.isSafeInteger(n) && (n as number) >= 0))
      throw new TypeError(`${where}.${key}: must be a non-negative integer`);
  }
  return { ...(u as unknown as ModelUsage) };
}

function checkTurn(turn: unknown, where: string): ScriptedTurn {
  if (typeof turn !== "object" || turn === null || Array.isArray(turn))
    throw new TypeError(`${where}: a turn must be an object`);
  const t = turn as Record<string, unknown>;
  refuseUnknownFields(t, TURN_FIELDS, where, "a turn field");
  for (const key of ["text", "reasoning"] as const)
    if (t[key] !== undefined && typeof t[key] !== "string")
      throw new TypeError(`${where}.${key}: must be a string`);
  if (t.stopReason !== undefined && !STOP_REASONS.has(t.stopReason as string))
    throw new TypeError(`${where}.stopReason: must be one of ${[...STOP_REASONS].join(", ")}`);
  const out: ScriptedTurn = { ...(t as ScriptedTurn) };
  if (t.usage !== undefined) out.usage = checkUsage(t.usage, `${where}.usage`);
  if (t.error !== undefined) out.error = checkError(t.error, `${where}.error`);
  if (t.failures !== undefined) {
    if (!Array.isArray(t.failures)) throw new TypeError(`${where}.failures: must be an array`);
    out.failures = t.failures.map((f: unknown, i) => checkError(f, `${where}.failures[${i}]`));
  }
  if (t.toolCalls !== undefined) {
    if (!Array.isArray(t.toolCalls)) throw new TypeError(`${where}.toolCalls: must be an array`);
    out.toolCalls = t.toolCalls.map((call: unknown, i) => {
      const at = `${where}.toolCalls[${i}]`;
      if (typeof call !== "object" || call === null)
        throw new TypeError(`${at}: must be { name, arguments }`);
      const c = call as Record<string, unknown>;
      if (typeof c.name !== "string" || c.name === "")
        throw new TypeError(`${at}.name: must be a non-empty string`);
      if (c.id !== undefined && (typeof c.id !== "string" || c.id === ""))
        throw new TypeError(`${at}.id: must be a non-empty string`);
      const args = copyJson(c.arguments, `${at}.arguments`);
      if (typeof args !== "object" || args === null || Array.isArray(args))
        throw new TypeError(`${at}.arguments: must be a JSON object`);
      return {
        ...(c.id !== undefined ? { id: c.id } : {}),
        name: c.name,
        arguments: args,
      };
    });
  }
  return out;
}

function chunksOf(text: string, size: number): string[] {
  const points = Array.from(text); // never split a surrogate pair
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function requestChars(request: ModelRequest): number {
  let n = request.system?.length ?? 0;
  for (const m of request.messages) {
    if (m.role === "assistant") {
      for (const part of m.content)
        n += part.type === "toolCall" ? JSON.stringify(part.arguments).length : part.text.length;
    } else n += contentText(m.content).length;
  }
  return n;
}

/** The error a `thrown` scripted failure throws: shaped like undici's fetch failure. */
function networkError(failure: ScriptedError): Error {
  const cause = Object.assign(new Error(failure.message), { code: failure.code ?? "ECONNRESET" });
  return new TypeError("fetch failed", { cause });
}

function errorEvent(failure: ScriptedError): ModelEvent {
  const { text: _text, thrown: _thrown, ...error } = failure;
  return { type: "error", ...error };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A deterministic model for tests and demos. Which turn answers is a pure
 * function of the request: the request holding n assistant messages gets
 * turn n (0-based), so a generation rerun after a crash, in a new process,
 * gets the same answer. A request past the end of the script gets an error
 * event (code `SCRIPT_EXHAUSTED`), never a made-up answer. The one thing
 * that is not a function of the request is `failures`: they are counted per
 * instance, which is what scripting "fails twice, then answers" needs.
 */
export class ScriptedModel implements Model {
  /** Every request received, in order (for tests to check what the harness sent). */
  readonly requests: ModelRequest[] = [];
  private readonly turns: readonly ScriptedTurn[];
  private readonly chunkDelayMs: number;
  private readonly chunkSize: number;
  /** Requests answered with a scripted failure so far, by turn (-1: compaction requests). */
  private readonly failed = new Map<number, number>();
  private readonly summary: string;
  private readonly summaryFailures: readonly ScriptedError[];

  constructor(turns: readonly ScriptedTurn[], options: ScriptedModelOptions = {}) {
    if (!Array.isArray(turns)) throw new TypeError("ScriptedModel: turns must be an array");
    this.turns = turns.map((turn, i) => checkTurn(turn, `turns[${i}]`));
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
    this.chunkSize = options.chunkSize ?? 4;
    if (options.summary !== undefined && typeof options.summary !== "string")
      throw new TypeError("ScriptedModel: summary must be a string");
    this.summary = options.summary ?? SCRIPTED_SUMMARY;
    if (options.summaryFailures !== undefined && !Array.isArray(options.summaryFailures))
      throw new TypeError("ScriptedModel: summaryFailures must be an array");
    this.summaryFailures = (options.summaryFailures ?? []).map((f, i) =>
      checkError(f, `summaryFailures[${i}]`),
    );
    if (!(Number.isFinite(this.chunkDelayMs) && this.chunkDelayMs >= 0))
      throw new TypeError("ScriptedModel: chunkDelayMs must be a non-negative number");
    if (!Number.isSafeInteger(this.chunkSize) || this.chunkSize < 1)
      throw new TypeError("ScriptedModel: chunkSize must be a positive integer");
  }

  /** A compaction request's answer: the scripted summary (after any scripted failure), streamed. */
  private async *summarize(
    request: ModelRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelEvent> {
    const failedSoFar = this.failed.get(-1) ?? 0;
    const failure = this.summaryFailures[failedSoFar];
    if (failure) {
      this.failed.set(-1, failedSoFar + 1);
      for await (const delta of this.chunks(failure.text ?? "", signal))
        yield { type: "text", delta };
      if (failure.thrown) throw networkError(failure);
      yield errorEvent(failure);
      return;
    }
    for await (const delta of this.chunks(this.summary, signal)) yield { type: "text", delta };
    signal?.throwIfAborted();
    yield {
      type: "done",
      stopReason: "stop",
      usage: { inputTokens: requestChars(request), outputTokens: this.summary.length },
    };
  }

  /** The turn a request gets: the number of assistant messages it holds. */
  turnFor(request: ModelRequest): number {
    return request.messages.filter((m) => m.role === "assistant").length;
  }

  private async *chunks(
    text: string,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<string, void, undefined> {
    for (const chunk of chunksOf(text, this.chunkSize)) {
      if (this.chunkDelayMs > 0) await sleep(this.chunkDelayMs, signal);
      signal?.throwIfAborted();
      yield chunk;
    }
  }

  async *stream(
    request: ModelRequest,
    options: ModelStreamOptions = {},
  ): AsyncGenerator<ModelEvent> {
    const { signal } = options;
    signal?.throwIfAborted();
    this.requests.push(request);
    if (request.purpose === "compaction") {
      yield* this.summarize(request, signal);
      return;
    }
    const index = this.turnFor(request);
    const turn = this.turns[index];
    if (!turn) {
      yield {
        type: "error",
        code: "SCRIPT_EXHAUSTED",
        message: `ScriptedModel: the script has ${this.turns.length} turn(s) and the request holds ${index} assistant message(s), so it asks for turn ${index + 1}, which the script does not have`,
      };
      return;
    }
    const failedSoFar = this.failed.get(index) ?? 0;
    const failure = turn.failures?.[failedSoFar];
    if (failure) {
      this.failed.set(index, failedSoFar + 1);
      for await (const delta of this.chunks(failure.text ?? "", signal))
        yield { type: "text", delta };
      if (failure.thrown) throw networkError(failure);
      yield errorEvent(failure);
      return;
    }
    const reasoning = turn.reasoning ?? "";
    for await (const delta of this.chunks(reasoning, signal)) yield { type: "reasoning", delta };
    const text = turn.text ?? "";
    for await (const delta of this.chunks(text, signal)) yield { type: "text", delta };
    if (turn.error !== undefined) {
      const error = turn.error as ScriptedError;
      if (error.thrown) throw networkError(error);
      yield errorEvent(error);
      return;
    }
    const calls = turn.toolCalls ?? [];
    for (const [i, call] of calls.entries()) {
      signal?.throwIfAborted();
      yield {
        type: "toolCall",
        id: call.id ?? `call_${index + 1}_${i + 1}`,
        name: call.name,
        arguments: call.arguments,
      };
    }
    signal?.throwIfAborted();
    yield {
      type: "done",
      stopReason: turn.stopReason ?? (calls.length > 0 ? "toolUse" : "stop"),
      usage: turn.usage ?? {
        inputTokens: requestChars(request),
        outputTokens: text.length + reasoning.length,
        ...(reasoning !== "" ? { reasoningTokens: reasoning.length } : {}),
      },
    };
  }
}
