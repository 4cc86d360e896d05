import type { ConversationId } from "../domain/ids.js";
import type { JsonObject } from "../domain/json.js";
import type { ContentPart } from "../domain/records.js";
import { checkSchema, type JsonSchema } from "./json-schema.js";
import type { ToolSpec } from "./model.js";

/**
 * What `execute` returns: a string, or text and image parts (base64
 * images, for tools that look at screenshots or files); `isError` marks a
 * failure the model should see as such.
 */
export interface ToolResult {
  content: string | ContentPart[];
  isError?: boolean;
}

/**
 * What a running tool may use. `replay` decides what happens after a crash
 * mid-call: "safe" reruns it (`attempt` grows), "unsafe" never reruns and
 * gets an `interrupted` error result carrying the output committed so far.
 */
export interface ToolApi {
  /** Aborted when the conversation is aborted or the harness closes. */
  readonly signal: AbortSignal;
  readonly toolCallId: string;
  readonly conversationId: ConversationId;
  /** 1 on the first run; 2, 3... when a safe tool is rerun after a crash. */
  readonly attempt: number;
  /**
   * Streams output: watchers see it at once, storage keeps it within the
   * progress window. Calls keep their order even when not awaited.
   */
  output(text: string): Promise<void>;
}

export type ToolReplay = "safe" | "unsafe";

export interface ToolDefinition<Args extends JsonObject = JsonObject> {
  /** What the model calls it: 1 to 64 of A-Z a-z 0-9 _ - (what provider APIs accept). */
  name: string;
  description: string;
  /** JSON Schema of the arguments (the subset in `JsonSchema`); arguments are validated before `execute`. */
  parameters: JsonSchema;
  replay: ToolReplay;
  /** Called as a plain function (`this` is not the definition). */
  execute(this: void, args: Args, api: ToolApi): ToolResult | Promise<ToolResult>;
}

/** A tool from `defineTool`: checked, frozen. */
export interface Tool<Args extends JsonObject = JsonObject> extends Readonly<ToolDefinition<Args>> {
  readonly spec: ToolSpec;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Defines a tool the model may call. Throws a `TypeError` naming the bad field. */
export function defineTool<Args extends JsonObject = JsonObject>(
  definition: ToolDefinition<Args>,
): Tool<Args> {
  if (typeof definition !== "object" || definition === null)
    throw new TypeError("defineTool: the definition must be an object");
  const { name, description, parameters, replay, execute } = definition;
  if (typeof name !== "string" || !NAME.test(name))
    throw new TypeError(
      `defineTool: name must be 1 to 64 of A-Z a-z 0-9 _ -, got ${JSON.stringify(name)}`,
    );
  const where = `tool "${name}"`;
  if (typeof description !== "string")
    throw new TypeError(`${where}: description must be a string`);
  if (replay !== "safe" && replay !== "unsafe")
    throw new TypeError(`${where}: replay must be "safe" or "unsafe"`);
  if (typeof execute !== "function") throw new TypeError(`${where}: execute must be a function`);
  checkSchema(parameters, `${where}: parameters`);
  if (parameters.type !== "object")
    throw new TypeError(`${where}: parameters.type must be "object" (arguments are a JSON object)`);
  const frozenParameters = structuredClone(parameters);
  return Object.freeze({
    name,
    description,
    parameters: frozenParameters,
    replay,
    execute,
    spec: Object.freeze({ name, description, parameters: frozenParameters }),
  });
}

/** Tools by name; a duplicate name is a `TypeError` (the model could not tell them apart). */
export function toolsByName(tools: readonly Tool[]): ReadonlyMap<string, Tool> {
  if (!Array.isArray(tools)) throw new TypeError("tools must be an array of defineTool results");
  const list: readonly Tool[] = tools;
  const byName = new Map<string, Tool>();
  list.forEach((tool, i) => {
    if (typeof tool !== "object" || tool === null || typeof tool.spec !== "object")
      throw new TypeError(`tools[${i}]: not a tool (use defineTool)`);
    if (byName.has(tool.name))
      throw new TypeError(`tools[${i}]: duplicate tool name "${tool.name}"`);
    byName.set(tool.name, tool);
  });
  return byName;
}
