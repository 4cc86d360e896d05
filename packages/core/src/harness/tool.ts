import type { SubagentRequest, SubagentResult } from "./subagent.js";
import type { ConversationId } from "../domain/ids.js";
import { copyJson, type Json, type JsonObject } from "../domain/json.js";
import type { ContentPart } from "../domain/records.js";
import type { Transaction } from "../session/transaction.js";
import type { MemoOptions } from "../tasks/memo.js";
import { checkSchema, type JsonSchema } from "./json-schema.js";
import { isPlainObject } from "./json-schema-check.js";
import { checkKeys } from "../domain/option-keys.js";
import type { ToolSpec } from "./model.js";
import {
  isStandardSchema,
  standardJsonSchema,
  type SchemaWithJsonSchema,
  type StandardSchemaV1,
} from "./standard-schema.js";

/**
 * What `execute` returns: a string, or text and image parts (base64
 * images, for tools that look at screenshots or files); `details` is any
 * JSON for UIs (stored with the result, never sent to the model); `isError`
 * marks a failure the model should see as such.
 */
export interface ToolResult {
  content: string | ContentPart[];
  details?: Json;
  isError?: boolean;
}

/** Options of `api.commit`. */
export interface ToolCommitOptions {
  /**
   * Records the commit under this key, in the same commit: a rerun of the
   * tool (after a crash) that commits with the key again gets the recorded
   * result and does not run `fn`, so the commit happens exactly once.
   * Without a key, a rerun commits again.
   */
  key?: string;
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
   * progress window. Calls keep their order even when not awaited. The slot
   * keeps the newest `settings.toolOutput` bytes and lines (50 KiB, 2,000
   * lines); what is cut is counted in `outputCut`.
   */
  output(text: string): Promise<void>;
  /**
   * Commits app state (entries, documents) on the session's commit line,
   * after the output streamed so far; all of `fn`'s writes are stored
   * together or not at all. Rejects if the tool's task is no longer running
   * for this call. Resolves with what `fn` returned.
   */
  commit<T>(fn: (tx: Transaction) => T | Promise<T>, options?: ToolCommitOptions): Promise<T>;
  /**
   * A durable memo of this call (a task memo): the result committed under
   * `key`, or `fn` run and its JSON result committed. By default `fn` runs
   * at most once across crashes; a run cut short throws `MemoInterrupted`.
   */
  memo<T extends Json | void>(
    key: string,
    fn: () => T | Promise<T>,
    options?: MemoOptions,
  ): Promise<T>;
  /**
   * Runs a subagent: a child conversation owned by this call's task, with
   * its own agent configuration (`agent`, as `conversation.configure`
   * takes it), answering `input`; resolves with its answer. Created once
   * per call and order (a safe tool rerun after a crash waits for the same
   * child); aborting the conversation aborts the child.
   */
  runConversation(request: SubagentRequest): Promise<SubagentResult>;
}

export type ToolReplay = "safe" | "unsafe";

/** What an `approval` function is told about the call it decides on. */
export interface ApprovalContext {
  readonly conversationId: ConversationId;
  readonly toolCallId: string;
  readonly toolName: string;
}

/**
 * Whether a call waits for a person before `execute`: "always", or a
 * function of the (validated) arguments returning true when this call
 * needs approval. A function that throws counts as "needs approval" (the
 * pending approval carries its error as a note).
 */
export type ToolApproval<Args = JsonObject> =
  | "always"
  // Method syntax: checked bivariantly like `execute`, so a Tool<{ a: number }> is still a Tool.
  | { decide(args: Args, context: ApprovalContext): boolean | Promise<boolean> }["decide"];

/**
 * A tool's arguments: a JSON Schema (validated by `validateSchema`), any
 * Standard Schema (zod 4, valibot, arktype: validated by its own
 * `~standard.validate`, JSON Schema from `~standard.jsonSchema`), or
 * `{ schema, jsonSchema }` for a Standard Schema that gives no JSON Schema.
 */
export type ToolParameters<Args = JsonObject> =
  JsonSchema | StandardSchemaV1<unknown, Args> | SchemaWithJsonSchema<Args>;

export interface ToolDefinition<Args = JsonObject> {
  /** What the model calls it: 1 to 64 of A-Z a-z 0-9 _ - (what provider APIs accept). */
  name: string;
  description: string;
  /** The arguments' schema; arguments are validated before `execute`. */
  parameters: ToolParameters<Args>;
  replay: ToolReplay;
  /** The tool's calls of one model turn run one at a time, in call order (others run alongside). */
  sequential?: boolean;
  /**
   * Calls that need a person's approval first: the call waits (durably,
   * holding no concurrency slot) until `conversation.approve` decides it;
   * denied, the model gets the error result "denied: <reason>".
   */
  approval?: ToolApproval<Args>;
  /** Called as a plain function (`this` is not the definition); with a Standard Schema, `args` is its parsed output. */
  execute(this: void, args: Args, api: ToolApi): ToolResult | Promise<ToolResult>;
}

/** A tool from `defineTool`: checked, frozen. */
export interface Tool<Args = JsonObject> {
  readonly name: string;
  readonly description: string;
  /** The JSON Schema sent to the model. */
  readonly parameters: JsonSchema;
  /** The Standard Schema that validates the arguments, when one was given. */
  readonly schema?: StandardSchemaV1<unknown, Args>;
  readonly replay: ToolReplay;
  readonly sequential: boolean;
  /** Absent: calls run without asking. */
  readonly approval?: ToolApproval<Args>;
  execute(this: void, args: Args, api: ToolApi): ToolResult | Promise<ToolResult>;
  readonly spec: ToolSpec;
}

type OutputOf<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function parametersOf(
  parameters: unknown,
  where: string,
): { json: JsonSchema; schema?: StandardSchemaV1 } {
  if (isStandardSchema(parameters))
    return { json: standardJsonSchema(parameters, `${where}: parameters`), schema: parameters };
  if (isPlainObject(parameters) && "schema" in parameters) {
    const keys = Object.keys(parameters);
    if (
      keys.some((k) => k !== "schema" && k !== "jsonSchema") ||
      !isStandardSchema(parameters.schema)
    )
      throw new TypeError(
        `${where}: parameters must be a JSON Schema, a Standard Schema, or { schema: <Standard Schema>, jsonSchema }`,
      );
    if (!isPlainObject(parameters.jsonSchema))
      throw new TypeError(
        `${where}: parameters.jsonSchema must be the JSON Schema sent to the model`,
      );
    return {
      json: copyJson(parameters.jsonSchema, `${where}: parameters.jsonSchema`) as JsonSchema,
      schema: parameters.schema,
    };
  }
  checkSchema(parameters, `${where}: parameters`);
  return { json: structuredClone(parameters) };
}

/** A definition's fields (`schema` and `spec` are accepted too, as a tool spread with changes carries them). */
const TOOL_FIELDS = [
  "name",
  "description",
  "parameters",
  "replay",
  "sequential",
  "approval",
  "execute",
];

/**
 * A definition's parameters. One spread from a tool (`{ ...tool, name }`)
 * carries its `spec` and, for a Standard Schema tool, its `schema`: kept
 * while `parameters` is still the tool's own, so the copy validates as the
 * tool did; a replaced `parameters` decides alone. `schema` without the
 * tool's `spec` is not a definition field.
 */
function ownParameters(definition: ToolDefinition<unknown>, where: string): unknown {
  const { parameters } = definition;
  const { schema, spec } = definition as { schema?: unknown; spec?: unknown };
  if (schema === undefined) return parameters;
  if (!isPlainObject(spec))
    throw new TypeError(
      `${where}: schema is not a tool field; give a Standard Schema as parameters, or { schema, jsonSchema }`,
    );
  return spec.parameters === parameters && isStandardSchema(schema)
    ? { schema, jsonSchema: parameters }
    : parameters;
}

/** Defines a tool the model may call. Throws a `TypeError` naming the bad field. */
export function defineTool<S extends StandardSchemaV1>(
  definition: Omit<ToolDefinition<OutputOf<S>>, "parameters"> & {
    parameters: S | { schema: S; jsonSchema: JsonSchema };
  },
): Tool<OutputOf<S>>;
export function defineTool<Args = JsonObject>(definition: ToolDefinition<Args>): Tool<Args>;
export function defineTool(definition: ToolDefinition<unknown>): Tool<unknown> {
  if (typeof definition !== "object" || definition === null)
    throw new TypeError("defineTool: the definition must be an object");
  const { name, description, replay, execute, sequential, approval } = definition;
  if (typeof name !== "string" || !NAME.test(name))
    throw new TypeError(
      `defineTool: name must be 1 to 64 of A-Z a-z 0-9 _ -, got ${JSON.stringify(name)}`,
    );
  const where = `tool "${name}"`;
  if (typeof description !== "string")
    throw new TypeError(`${where}: description must be a string`);
  if (replay !== "safe" && replay !== "unsafe")
    throw new TypeError(`${where}: replay must be "safe" or "unsafe"`);
  if (sequential !== undefined && typeof sequential !== "boolean")
    throw new TypeError(`${where}: sequential must be true or false`);
  if (typeof execute !== "function") throw new TypeError(`${where}: execute must be a function`);
  if (approval !== undefined && approval !== "always" && typeof approval !== "function")
    throw new TypeError(
      `${where}: approval must be "always" or a function (args, context) => boolean`,
    );
  const {
    schema: _schema,
    spec: _spec,
    ...own
  } = definition as ToolDefinition<unknown> & {
    schema?: unknown;
    spec?: unknown;
  };
  checkKeys(own, TOOL_FIELDS, `defineTool: ${where}`, { what: "a tool field" });
  const { json, schema } = parametersOf(ownParameters(definition, where), where);
  if (json.type !== "object")
    throw new TypeError(`${where}: parameters.type must be "object" (arguments are a JSON object)`);
  deepFreeze(json);
  return Object.freeze({
    name,
    description,
    parameters: json,
    ...(schema !== undefined ? { schema } : {}),
    replay,
    sequential: sequential === true,
    ...(approval !== undefined ? { approval } : {}),
    execute,
    spec: Object.freeze({ name, description, parameters: json }),
  });
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
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
