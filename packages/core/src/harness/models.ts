import type { Model, ModelPrices } from "./model.js";
import { refuseUnknownFields } from "../domain/option-keys.js";

/** The model name a run uses when neither its input nor its conversation names one. */
export const DEFAULT_MODEL = "default";

const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A model registered with what the harness should know about it (each
 * field wins over what the model itself declares).
 */
export interface ModelRegistration {
  model: Model;
  /** Tokens the model's context holds: automatic compaction needs it. */
  contextWindow?: number;
  /** What it costs, for the usage ledger's `cost`. */
  prices?: ModelPrices;
  /** The fraction of `contextWindow` past which a conversation is compacted (default: `settings.compaction.threshold`). */
  compactAt?: number;
}

/** A model of the harness's registry, with what is known about it. */
export interface RegisteredModel {
  readonly name: string;
  readonly model: Model;
  readonly contextWindow?: number;
  readonly prices?: ModelPrices;
  readonly compactAt?: number;
}

const REGISTRATION_FIELDS = ["model", "contextWindow", "prices", "compactAt"];
const PRICE_FIELDS = ["inputPerMillion", "outputPerMillion", "cachedInputPerMillion"];

function isModel(value: unknown): value is Model {
  return typeof (value as Partial<Model> | null)?.stream === "function";
}

/** Checks a prices declaration; a `TypeError` names the bad field. */
export function checkPrices(value: unknown, where: string): ModelPrices {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError(
      `${where}: must be { inputPerMillion, outputPerMillion, cachedInputPerMillion? }`,
    );
  const p = value as Record<string, unknown>;
  refuseUnknownFields(p, PRICE_FIELDS, where, "a price field");
  for (const key of PRICE_FIELDS) {
    const n = p[key];
    if (n === undefined && key === "cachedInputPerMillion") continue;
    if (!(typeof n === "number" && Number.isFinite(n) && n >= 0))
      throw new TypeError(`${where}.${key}: must be a non-negative number`);
  }
  return { ...(p as unknown as ModelPrices) };
}

function checkContextWindow(value: unknown, where: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new TypeError(`${where}: must be a positive integer number of tokens`);
  return value as number;
}

/** Checks a compaction threshold: a fraction above 0, at most 1. */
export function checkThreshold(value: unknown, where: string): number {
  if (!(typeof value === "number" && value > 0 && value <= 1))
    throw new TypeError(`${where}: must be a fraction above 0 and at most 1`);
  return value;
}

function registered(name: string, value: unknown, where: string): RegisteredModel {
  if (isModel(value)) {
    return {
      name,
      model: value,
      ...(value.contextWindow !== undefined
        ? { contextWindow: checkContextWindow(value.contextWindow, `${where}.contextWindow`) }
        : {}),
      ...(value.prices !== undefined
        ? { prices: checkPrices(value.prices, `${where}.prices`) }
        : {}),
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("model" in value))
    throw new TypeError(
      `${where} must implement stream(request, { signal }), or be { model, contextWindow?, prices?, compactAt? }`,
    );
  const r = value as Record<string, unknown>;
  refuseUnknownFields(r, REGISTRATION_FIELDS, where, "a registration field");
  if (!isModel(r.model))
    throw new TypeError(`${where}.model must implement stream(request, { signal })`);
  const model = r.model;
  const contextWindow = r.contextWindow ?? model.contextWindow;
  const prices = r.prices ?? model.prices;
  return {
    name,
    model,
    ...(contextWindow !== undefined
      ? { contextWindow: checkContextWindow(contextWindow, `${where}.contextWindow`) }
      : {}),
    ...(prices !== undefined ? { prices: checkPrices(prices, `${where}.prices`) } : {}),
    ...(r.compactAt !== undefined
      ? { compactAt: checkThreshold(r.compactAt, `${where}.compactAt`) }
      : {}),
  };
}

/**
 * The harness's models by name, from `model` (one model, named "default")
 * or `models` (a record that must name a "default"); each a model or a
 * registration `{ model, contextWindow?, prices?, compactAt? }`. Throws a
 * `TypeError` naming what is wrong: both given, neither, no default, a
 * value that is not a model, a bad declaration.
 */
export function modelsByName(options: {
  model?: unknown;
  models?: unknown;
}): Map<string, RegisteredModel> {
  const { model, models } = options;
  if (model !== undefined && models !== undefined)
    throw new TypeError("Harness.open: give options.model or options.models, not both");
  const entries: [string, unknown][] =
    model !== undefined
      ? [[DEFAULT_MODEL, model]]
      : typeof models === "object" && models !== null && !Array.isArray(models)
        ? Object.entries(models)
        : [];
  if (model === undefined && models === undefined)
    throw new TypeError("Harness.open: options.model (or options.models) is required");
  if (entries.length === 0 && model === undefined)
    throw new TypeError("Harness.open: options.models must be a record of models by name");
  const out = new Map<string, RegisteredModel>();
  for (const [name, value] of entries) {
    const where = model !== undefined ? "options.model" : `options.models.${name}`;
    if (!NAME.test(name))
      throw new TypeError(`${where}: a model name is 1 to 64 of A-Z a-z 0-9 _ . : -`);
    out.set(name, registered(name, value, where));
  }
  if (!out.has(DEFAULT_MODEL))
    throw new TypeError(
      `Harness.open: options.models has no "${DEFAULT_MODEL}" (it names ${[...out.keys()].map((n) => `"${n}"`).join(", ")}); the default answers every input that names no model`,
    );
  return out;
}
