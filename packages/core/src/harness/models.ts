import type { Model } from "./model.js";

/** The model name a run uses when its input names none. */
export const DEFAULT_MODEL = "default";

const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The harness's models by name, from `model` (one model, named "default")
 * or `models` (a record that must name a "default"). Throws a `TypeError`
 * naming what is wrong: both given, neither, no default, a value that is
 * not a model.
 */
export function modelsByName(options: { model?: unknown; models?: unknown }): Map<string, Model> {
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
  const out = new Map<string, Model>();
  for (const [name, value] of entries) {
    const where = model !== undefined ? "options.model" : `options.models.${name}`;
    if (!NAME.test(name))
      throw new TypeError(`${where}: a model name is 1 to 64 of A-Z a-z 0-9 _ . : -`);
    if (typeof (value as Partial<Model> | null)?.stream !== "function")
      throw new TypeError(`${where} must implement stream(request, { signal })`);
    out.set(name, value as Model);
  }
  if (!out.has(DEFAULT_MODEL))
    throw new TypeError(
      `Harness.open: options.models has no "${DEFAULT_MODEL}" (it names ${[...out.keys()].map((n) => `"${n}"`).join(", ")}); the default answers every input that names no model`,
    );
  return out;
}
