import { copyJson, type JsonObject } from "../domain/json.js";
import type { StopReason } from "../domain/records.js";
import type { Model, ModelEvent, ModelRequest, ModelStreamOptions, ModelUsage } from "./model.js";

export interface ScriptedToolCall {
  /** Default `call_<turn>_<index>` (1-based), stable across restarts. */
  id?: string;
  name: string;
  arguments: JsonObject;
}

/** One scripted answer: streamed text, then tool calls, then `done` (or `error`). */
export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default "toolUse" when the turn calls tools, else "stop". */
  stopReason?: StopReason;
  /** The turn ends with an error event carrying this message (after its text). */
  error?: string;
  /** Default: characters in (the request's messages, this turn's text). */
  usage?: ModelUsage;
}

export interface ScriptedModelOptions {
  /** Pause between text chunks, so streaming is observable (default 0: no timer at all). */
  chunkDelayMs?: number;
  /** Code points per text chunk (default 4). */
  chunkSize?: number;
}

const STOP_REASONS = new Set<string>(["stop", "toolUse", "length", "error", "aborted"]);

function checkTurn(turn: unknown, where: string): ScriptedTurn {
  if (typeof turn !== "object" || turn === null || Array.isArray(turn))
    throw new TypeError(`${where}: a turn must be an object`);
  const t = turn as Record<string, unknown>;
  for (const key of Object.keys(t))
    if (!["text", "toolCalls", "stopReason", "error", "usage"].includes(key))
      throw new TypeError(
        `${where}.${key}: not a turn field (text, toolCalls, stopReason, error, usage)`,
      );
  if (t.text !== undefined && typeof t.text !== "string")
    throw new TypeError(`${where}.text: must be a string`);
  if (t.error !== undefined && typeof t.error !== "string")
    throw new TypeError(`${where}.error: must be a string`);
  if (t.stopReason !== undefined && !STOP_REASONS.has(t.stopReason as string))
    throw new TypeError(`${where}.stopReason: must be one of ${[...STOP_REASONS].join(", ")}`);
  if (t.usage !== undefined) {
    const u = t.usage as Record<string, unknown> | null;
    if (
      typeof u !== "object" ||
      u === null ||
      !Number.isSafeInteger(u.inputTokens) ||
      !Number.isSafeInteger(u.outputTokens)
    )
      throw new TypeError(`${where}.usage: must be { inputTokens, outputTokens } integers`);
  }
  let toolCalls: ScriptedToolCall[] | undefined;
  if (t.toolCalls !== undefined) {
    if (!Array.isArray(t.toolCalls)) throw new TypeError(`${where}.toolCalls: must be an array`);
    toolCalls = t.toolCalls.map((call: unknown, i) => {
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
  return { ...(t as ScriptedTurn), ...(toolCalls ? { toolCalls } : {}) };
}

function chunksOf(text: string, size: number): string[] {
  const points = Array.from(text); // never split a surrogate pair
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function messageChars(request: ModelRequest): number {
  let n = 0;
  for (const m of request.messages) {
    if (m.role === "assistant") {
      for (const part of m.content)
        n += part.type === "text" ? part.text.length : JSON.stringify(part.arguments).length;
    } else n += m.content.length;
  }
  return n;
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
 * event (code `SCRIPT_EXHAUSTED`), never a made-up answer.
 */
export class ScriptedModel implements Model {
  /** Every request received, in order (for tests to inspect the derived context). */
  readonly requests: ModelRequest[] = [];
  private readonly turns: readonly ScriptedTurn[];
  private readonly chunkDelayMs: number;
  private readonly chunkSize: number;

  constructor(turns: readonly ScriptedTurn[], options: ScriptedModelOptions = {}) {
    if (!Array.isArray(turns)) throw new TypeError("ScriptedModel: turns must be an array");
    this.turns = turns.map((turn, i) => checkTurn(turn, `turns[${i}]`));
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
    this.chunkSize = options.chunkSize ?? 4;
    if (!(Number.isFinite(this.chunkDelayMs) && this.chunkDelayMs >= 0))
      throw new TypeError("ScriptedModel: chunkDelayMs must be a non-negative number");
    if (!Number.isSafeInteger(this.chunkSize) || this.chunkSize < 1)
      throw new TypeError("ScriptedModel: chunkSize must be a positive integer");
  }

  /** The turn a request gets: the number of assistant messages it holds. */
  turnFor(request: ModelRequest): number {
    return request.messages.filter((m) => m.role === "assistant").length;
  }

  async *stream(
    request: ModelRequest,
    options: ModelStreamOptions = {},
  ): AsyncGenerator<ModelEvent> {
    const { signal } = options;
    signal?.throwIfAborted();
    this.requests.push(request);
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
    const text = turn.text ?? "";
    for (const chunk of chunksOf(text, this.chunkSize)) {
      if (this.chunkDelayMs > 0) await sleep(this.chunkDelayMs, signal);
      signal?.throwIfAborted();
      yield { type: "text", delta: chunk };
    }
    if (turn.error !== undefined) {
      yield { type: "error", message: turn.error };
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
      usage: turn.usage ?? { inputTokens: messageChars(request), outputTokens: text.length },
    };
  }
}
