import { checkJson } from "../domain/json.js";
import type { StopReason } from "../domain/records.js";
import type { ModelError, ModelErrorKind, ModelEvent } from "./model.js";
import { described } from "../domain/option-keys.js";

/*
 * The shape check of each event a Model's stream yields, against the Model
 * port (model.ts): the harness keeps nothing of a malformed event, and the
 * model call ends with a non-retryable `MALFORMED_EVENT` failure naming the
 * event and the field.
 */

/** The `code` of the failure a model call ends with when its stream yields a malformed event. */
export const MALFORMED_EVENT = "MALFORMED_EVENT";

/** Each event type's fields (`type` first), as the Model port (model.ts) defines them. */
const EVENT_FIELDS: Readonly<Record<ModelEvent["type"], readonly string[]>> = {
  text: ["type", "delta"],
  reasoning: ["type", "delta", "id", "providerMetadata"],
  toolCall: ["type", "id", "name", "arguments", "providerMetadata"],
  done: ["type", "stopReason", "usage"],
  error: ["type", "message", "code", "retryable", "retryAfterMs", "kind"],
};
const STOP_REASONS: readonly StopReason[] = ["stop", "toolUse", "length", "error", "aborted"];
const ERROR_KINDS: readonly ModelErrorKind[] = ["overflow", "auth", "invalid", "transient"];
const USAGE_FIELDS = ["inputTokens", "outputTokens", "cachedInputTokens", "reasoningTokens"];

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const oneOf = (names: readonly string[]): string => names.join(", ");

/** Why `value` is not a JSON object (at `at`), or `undefined`. */
function notJsonObject(value: unknown, at: string): string | undefined {
  if (!isObject(value)) return `${at}: must be a JSON object, got ${described(value)}`;
  try {
    checkJson(value, at);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

const nonEmptyString = (value: unknown): boolean => typeof value === "string" && value !== "";
const tokenCount = (value: unknown): boolean =>
  typeof value === "number" && Number.isFinite(value) && value >= 0;

function usageProblem(usage: unknown): string | undefined {
  if (!isObject(usage))
    return `done.usage: must be { inputTokens, outputTokens, cachedInputTokens?, reasoningTokens? }, got ${described(usage)}`;
  for (const key of Object.keys(usage))
    if (usage[key] !== undefined && !USAGE_FIELDS.includes(key))
      return `done.usage.${key}: not a usage field (${oneOf(USAGE_FIELDS)})`;
  for (const key of USAGE_FIELDS) {
    const value = usage[key];
    const optional = key === "cachedInputTokens" || key === "reasoningTokens";
    if ((value !== undefined || !optional) && !tokenCount(value))
      return `done.usage.${key}: must be a non-negative number of tokens, got ${described(value)}`;
  }
  return undefined;
}

/**
 * What is wrong with one event of a model stream, naming the event and the
 * field (`toolCall.id: ...`), or `undefined` when it is well formed.
 * `callIds` holds the ids of the answer's tool calls so far (each call
 * needs its own).
 */
export function eventProblem(event: unknown, callIds: ReadonlySet<string>): string | undefined {
  if (!isObject(event)) return `the stream yielded ${described(event)}, not an event object`;
  const type = event.type;
  if (typeof type !== "string" || !Object.hasOwn(EVENT_FIELDS, type))
    return `type: ${described(type)} is not an event type (${oneOf(Object.keys(EVENT_FIELDS))})`;
  const fields = EVENT_FIELDS[type as ModelEvent["type"]];
  for (const key of Object.keys(event))
    if (event[key] !== undefined && !fields.includes(key))
      return `${type}.${key}: not a field of a ${type} event (${oneOf(fields.slice(1))})`;
  const e = event;
  switch (type as ModelEvent["type"]) {
    case "text":
      if (typeof e.delta !== "string")
        return `text.delta: must be a string, got ${described(e.delta)}`;
      return undefined;
    case "reasoning":
      if (typeof e.delta !== "string")
        return `reasoning.delta: must be a string, got ${described(e.delta)}`;
      if (e.id !== undefined && typeof e.id !== "string")
        return `reasoning.id: must be a string, got ${described(e.id)}`;
      if (e.providerMetadata !== undefined)
        return notJsonObject(e.providerMetadata, "reasoning.providerMetadata");
      return undefined;
    case "toolCall":
      if (!nonEmptyString(e.id))
        return `toolCall.id: must be a non-empty string, got ${described(e.id)}`;
      if (callIds.has(e.id as string))
        return `toolCall.id: ${JSON.stringify(e.id)} is the id of an earlier tool call of this answer (each call needs its own id)`;
      if (!nonEmptyString(e.name))
        return `toolCall.name: must be a non-empty string, got ${described(e.name)}`;
      return (
        notJsonObject(e.arguments, "toolCall.arguments") ??
        (e.providerMetadata !== undefined
          ? notJsonObject(e.providerMetadata, "toolCall.providerMetadata")
          : undefined)
      );
    case "done":
      if (!STOP_REASONS.includes(e.stopReason as StopReason))
        return `done.stopReason: ${described(e.stopReason)} is not a stop reason (${oneOf(STOP_REASONS)})`;
      return usageProblem(e.usage);
    case "error":
      // An empty message is allowed: providers send one (an HTTP/2 error with no body has no
      // status text), and refusing it would turn a retryable error into a final one.
      if (typeof e.message !== "string")
        return `error.message: must be a string, got ${described(e.message)}`;
      if (e.code !== undefined && typeof e.code !== "string")
        return `error.code: must be a string, got ${described(e.code)}`;
      if (e.retryable !== undefined && typeof e.retryable !== "boolean")
        return `error.retryable: must be a boolean, got ${described(e.retryable)}`;
      if (e.retryAfterMs !== undefined && !tokenCount(e.retryAfterMs))
        return `error.retryAfterMs: must be a non-negative number of milliseconds, got ${described(e.retryAfterMs)}`;
      if (e.kind !== undefined && !ERROR_KINDS.includes(e.kind as ModelErrorKind))
        return `error.kind: ${described(e.kind)} is not an error kind (${oneOf(ERROR_KINDS)})`;
      return undefined;
  }
}

/** The failure a malformed event ends its model call with (not retryable: the same model would send it again). */
export function malformedError(problem: string, event: unknown): ModelError {
  const said =
    isObject(event) && event.type === "error" && nonEmptyString(event.message)
      ? `; its message was ${JSON.stringify(event.message)}`
      : "";
  return {
    message: `the model sent a malformed event: ${problem}${said}`,
    code: MALFORMED_EVENT,
    kind: "invalid",
    retryable: false,
  };
}
