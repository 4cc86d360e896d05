import type { ErrorInfo } from "../domain/records.js";
import { copyJson, type JsonObject } from "../domain/json.js";
import { defineDoc } from "../session/tokens.js";
import { assembleInstructions, layerInstructions, type Instructions } from "./instructions.js";
import type { ModelSettings } from "./model.js";
import { DEFAULT_MODEL, type RegisteredModel } from "./models.js";
import { UNKNOWN_HOOKS, type Hooks } from "./hooks.js";
import type { Tool } from "./tool.js";
import { checkKeys } from "../domain/option-keys.js";

/** The `code` of the failure a run ends with when its model is not registered (reason `unknown-model`). */
export const UNKNOWN_MODEL = "UNKNOWN_MODEL";
/** The `code` of the failure a run ends with when a configured tool is not registered (reason `unknown-tool`). */
export const UNKNOWN_TOOL = "UNKNOWN_TOOL";

/**
 * A conversation's agent, as `conversation.configure` stored it: names,
 * never objects (the harness registers the models and tools by name).
 * An absent field follows the harness.
 */
export type AgentState = {
  /** The model that answers (unless an input names its own). */
  model?: string;
  /** The tools offered, by name, in this order; absent: every registered tool. */
  tools?: string[];
  /** Laid over the harness's instructions: a string replaces them, sections replace by id. */
  instructions?: string | { id: string; text: string }[];
  /** Laid over the harness's `settings.model`, key by key. */
  settings?: JsonObject;
  /** Named hook sets (of `Harness.open`'s `hookSets`) that run after the harness's `hooks`, in order. */
  hooks?: string[];
};

/**
 * `durably.agent`: a conversation's agent configuration. Committed like
 * any state, so it survives restarts; a fork starts with its parent's
 * current configuration.
 */
export const AgentDoc = defineDoc<AgentState, "conversation">({
  kind: "durably.agent",
  version: 1,
  scope: "conversation",
  history: "latest",
  fork: "current",
  initial: () => ({}),
});

/** What `conversation.configure` takes: a field set replaces, `null` returns it to the harness's, absent leaves it. */
export interface AgentConfig {
  model?: string | null;
  tools?: readonly string[] | null;
  instructions?: Instructions | null;
  settings?: ModelSettings | null;
  hooks?: readonly string[] | null;
}

const CONFIG_FIELDS = ["model", "tools", "instructions", "settings", "hooks"];

const quoted = (names: Iterable<string>): string =>
  [...names].map((n) => JSON.stringify(n)).join(", ") || "none";

/** What the configure commit does to each field: set a value, or delete it. */
export type AgentChange = { [K in keyof AgentState]?: AgentState[K] | null };

/**
 * Checks a configuration against the registry before anything is stored:
 * names must be registered (a `TypeError` naming the unknown one and the
 * registered ones), instructions well formed, settings a JSON object.
 */
export function checkAgentConfig(
  input: unknown,
  registry: {
    models: ReadonlySet<string>;
    tools: ReadonlySet<string>;
    hooks?: ReadonlySet<string>;
  },
): AgentChange {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new TypeError("configure: the configuration must be an object");
  const c = checkKeys(input, CONFIG_FIELDS, "configure", { what: "a configuration field" });
  const out: AgentChange = {};
  if (c.model !== undefined) {
    if (c.model !== null && (typeof c.model !== "string" || !registry.models.has(c.model)))
      throw new TypeError(
        `configure: model ${JSON.stringify(c.model)} is not one of the harness's models (${quoted(registry.models)})`,
      );
    out.model = c.model;
  }
  if (c.tools !== undefined) out.tools = checkNames(c.tools, "tools", registry.tools);
  if (c.hooks !== undefined)
    out.hooks = checkNames(c.hooks, "hooks", registry.hooks ?? new Set(), "hook sets");
  if (c.instructions !== undefined) {
    if (c.instructions !== null) assembleInstructions(c.instructions, "configure: instructions");
    out.instructions =
      c.instructions === null
        ? null
        : (copyJson(c.instructions, "configure: instructions") as AgentState["instructions"]);
  }
  if (c.settings !== undefined) {
    if (c.settings !== null && (typeof c.settings !== "object" || Array.isArray(c.settings)))
      throw new TypeError("configure: settings must be an object of model settings");
    out.settings =
      c.settings === null ? null : (copyJson(c.settings, "configure: settings") as JsonObject);
  }
  return out;
}

/** A list of registered names, each once (`null` passes: back to the harness's). */
function checkNames(
  value: unknown,
  field: "tools" | "hooks",
  registered: ReadonlySet<string>,
  what: string = field,
): string[] | null {
  if (value === null) return null;
  if (!Array.isArray(value))
    throw new TypeError(`configure: ${field} must be an array of ${what} names`);
  const seen = new Set<string>();
  (value as unknown[]).forEach((name, i) => {
    if (typeof name !== "string" || !registered.has(name))
      throw new TypeError(
        `configure: ${field}[${i}] ${JSON.stringify(name)} is not one of the harness's ${what} (${quoted(registered)})`,
      );
    if (seen.has(name)) throw new TypeError(`configure: ${field}[${i}] "${name}" is listed twice`);
    seen.add(name);
  });
  return [...seen];
}

/** Applies a checked change to the stored configuration (a draft). */
export function applyAgentChange(agent: AgentState, change: AgentChange): void {
  for (const key of Object.keys(change) as (keyof AgentState)[]) {
    const value = change[key];
    if (value === null) delete agent[key];
    else (agent as Record<string, unknown>)[key] = value;
  }
}

/** What the harness offers a run: its registry and defaults. */
export interface AgentDefaults {
  readonly models: ReadonlyMap<string, RegisteredModel>;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly instructions?: Instructions;
  readonly settings?: ModelSettings;
  /** Hooks of every conversation (`Harness.open`'s `hooks`). */
  readonly hooks?: readonly Hooks[];
  /** Hook sets a conversation's configuration may name (`hookSets`). */
  readonly hookSets?: ReadonlyMap<string, Hooks>;
}

/**
 * The hooks a conversation's runs call: the harness's, then its configured
 * sets in order; a set the harness does not have is an error naming it.
 */
export function resolveHooks(
  agent: AgentState,
  defaults: AgentDefaults,
): readonly Hooks[] | { error: ErrorInfo } {
  const base = defaults.hooks ?? [];
  if (agent.hooks === undefined || agent.hooks.length === 0) return base;
  const sets = defaults.hookSets ?? new Map<string, Hooks>();
  const missing = agent.hooks.filter((n) => !sets.has(n));
  if (missing.length > 0)
    return {
      error: {
        name: "UnknownHooks",
        message: `the conversation is configured with hook set${missing.length > 1 ? "s" : ""} ${quoted(missing)}, which this harness does not have (it has ${quoted(sets.keys())})`,
        code: UNKNOWN_HOOKS,
      },
    };
  return [...base, ...agent.hooks.map((n) => sets.get(n) as Hooks)];
}

/** A run's agent, resolved against the registry for one model call. */
export interface ResolvedAgent {
  readonly model: RegisteredModel;
  readonly tools: readonly Tool[];
  readonly system?: string;
  readonly settings?: ModelSettings;
  /** The hooks around its steps (the harness's, then the conversation's sets). */
  readonly hooks: readonly Hooks[];
}

/**
 * Resolves what a model call uses: the model the input named, else the
 * conversation's, else "default"; the conversation's tools (or all); the
 * instructions and settings layered. A name the harness does not have (the
 * configuration was stored by a process that had it) is an error naming it.
 */
export function resolveAgent(
  agent: AgentState,
  runModel: string | undefined,
  defaults: AgentDefaults,
): ResolvedAgent | { error: ErrorInfo } {
  const name = runModel ?? agent.model ?? DEFAULT_MODEL;
  const model = defaults.models.get(name);
  if (!model)
    return {
      error: {
        name: "UnknownModel",
        message: `the run asks for model "${name}", which this harness does not have (it has ${quoted(defaults.models.keys())})`,
        code: UNKNOWN_MODEL,
      },
    };
  let tools: Tool[];
  if (agent.tools === undefined) tools = [...defaults.tools.values()];
  else {
    const missing = agent.tools.filter((n) => !defaults.tools.has(n));
    if (missing.length > 0)
      return {
        error: {
          name: "UnknownTool",
          message: `the conversation is configured with tool${missing.length > 1 ? "s" : ""} ${quoted(missing)}, which this harness does not have (it has ${quoted(defaults.tools.keys())})`,
          code: UNKNOWN_TOOL,
        },
      };
    tools = agent.tools.map((n) => defaults.tools.get(n) as Tool);
  }
  const hooks = resolveHooks(agent, defaults);
  if ("error" in hooks) return hooks;
  const system = assembleInstructions(
    layerInstructions(defaults.instructions, agent.instructions),
    "instructions",
  );
  const settings =
    agent.settings === undefined ? defaults.settings : { ...defaults.settings, ...agent.settings };
  return {
    model,
    tools,
    hooks,
    ...(system !== undefined ? { system } : {}),
    ...(settings !== undefined ? { settings } : {}),
  };
}
