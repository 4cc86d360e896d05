import type { RunnableConfig } from "@langchain/core/runnables";
import { jsonBytes, MAX_KEY_BYTES } from "@durably/core";
import { getCheckpointId } from "@langchain/langgraph-checkpoint";
import { CheckpointConfigError } from "./errors.js";

/** Where a checkpoint lives: LangGraph's thread and namespace (subgraphs get their own namespace). */
export interface ThreadAddress {
  threadId: string;
  ns: string;
}

/** LangGraph passes thread ids as strings; numbers are accepted and stored as their decimal text. */
export function threadIdOf(value: unknown, where: string): string {
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new CheckpointConfigError(
    `${where}: config.configurable.thread_id must be a non-empty string, got ${describe(value)}`,
  );
}

/**
 * An id a write stores under (a thread id, the checkpoint id writes belong
 * to): it keys a Durably document, whose key may hold at most
 * `MAX_KEY_BYTES` of JSON text on every backend (PostgreSQL indexes it).
 * Reads of a longer id find nothing, as for any id never written.
 */
function storableKey(value: string, field: string, where: string): string {
  const bytes = jsonBytes(value);
  if (bytes > MAX_KEY_BYTES)
    throw new CheckpointConfigError(
      `${where}: config.configurable.${field} is ${bytes} bytes of JSON text, over the limit of ${MAX_KEY_BYTES} bytes (it keys a Durably document); nothing was stored`,
    );
  return value;
}

function nsOf(value: unknown, where: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  throw new CheckpointConfigError(
    `${where}: config.configurable.checkpoint_ns must be a string, got ${describe(value)}`,
  );
}

function checkpointIdOf(value: unknown, where: string, field: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  throw new CheckpointConfigError(`${where}: ${field} must be a string, got ${describe(value)}`);
}

function configurableOf(config: RunnableConfig, where: string): Record<string, unknown> {
  const configurable: unknown = config?.configurable;
  if (typeof configurable !== "object" || configurable === null)
    throw new CheckpointConfigError(`${where}: config.configurable is missing`);
  return configurable as Record<string, unknown>;
}

/** put: thread and namespace to write to, and the parent checkpoint (the config's checkpoint_id). */
export function putTarget(config: RunnableConfig): ThreadAddress & { parentId?: string } {
  const c = configurableOf(config, "put");
  const parentId = checkpointIdOf(c.checkpoint_id, "put", "config.configurable.checkpoint_id");
  return {
    threadId: storableKey(threadIdOf(c.thread_id, "put"), "thread_id", "put"),
    ns: nsOf(c.checkpoint_ns, "put"),
    ...(parentId !== undefined ? { parentId } : {}),
  };
}

/** putWrites: the checkpoint the writes belong to (thread and checkpoint id are required). */
export function writesTarget(config: RunnableConfig): ThreadAddress & { checkpointId: string } {
  const c = configurableOf(config, "putWrites");
  const checkpointId = checkpointIdOf(
    c.checkpoint_id,
    "putWrites",
    "config.configurable.checkpoint_id",
  );
  if (checkpointId === undefined)
    throw new CheckpointConfigError(
      "putWrites: config.configurable.checkpoint_id is missing (writes belong to a checkpoint)",
    );
  return {
    threadId: storableKey(threadIdOf(c.thread_id, "putWrites"), "thread_id", "putWrites"),
    ns: nsOf(c.checkpoint_ns, "putWrites"),
    checkpointId: storableKey(checkpointId, "checkpoint_id", "putWrites"),
  };
}

/** getTuple: undefined when the config names no thread (LangGraph's savers return nothing then). */
export function readTarget(
  config: RunnableConfig,
): (ThreadAddress & { checkpointId?: string }) | undefined {
  const c = config?.configurable;
  if (c?.thread_id === undefined || c.thread_id === null) return undefined;
  const checkpointId = checkpointIdOf(getCheckpointId(config), "getTuple", "checkpoint_id");
  return {
    threadId: threadIdOf(c.thread_id, "getTuple"),
    ns: nsOf(c.checkpoint_ns, "getTuple"),
    ...(checkpointId !== undefined ? { checkpointId } : {}),
  };
}

/** list: each field narrows the listing when present. */
export function listTarget(config: RunnableConfig): {
  threadId?: string;
  ns?: string;
  checkpointId?: string;
} {
  const c = (config?.configurable ?? {}) as Record<string, unknown>;
  const out: { threadId?: string; ns?: string; checkpointId?: string } = {};
  if (c.thread_id !== undefined && c.thread_id !== null && c.thread_id !== "")
    out.threadId = threadIdOf(c.thread_id, "list");
  if (c.checkpoint_ns !== undefined && c.checkpoint_ns !== null)
    out.ns = nsOf(c.checkpoint_ns, "list");
  const id = checkpointIdOf(c.checkpoint_id, "list", "config.configurable.checkpoint_id");
  if (id !== undefined) out.checkpointId = id;
  return out;
}

export function beforeIdOf(before: RunnableConfig | undefined): string | undefined {
  return checkpointIdOf(
    before?.configurable?.checkpoint_id,
    "list",
    "options.before.configurable.checkpoint_id",
  );
}

export function tupleConfig(address: ThreadAddress, checkpointId: string): RunnableConfig {
  return {
    configurable: {
      thread_id: address.threadId,
      checkpoint_ns: address.ns,
      checkpoint_id: checkpointId,
    },
  };
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  return typeof value;
}
