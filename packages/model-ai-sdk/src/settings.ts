import type { LanguageModelV3CallOptions, SharedV3ProviderOptions } from "@ai-sdk/provider";
import type { Json, ModelSettings } from "@durably/core";

type CallSettings = Pick<
  LanguageModelV3CallOptions,
  | "maxOutputTokens"
  | "temperature"
  | "topP"
  | "topK"
  | "presencePenalty"
  | "frequencyPenalty"
  | "seed"
  | "stopSequences"
  | "providerOptions"
>;

type Check = (value: Json, where: string) => void;

const number: Check = (value, where) => {
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new TypeError(`${where}: must be a finite number`);
};
const integer: Check = (value, where) => {
  if (!Number.isSafeInteger(value)) throw new TypeError(`${where}: must be an integer`);
};
const strings: Check = (value, where) => {
  if (!Array.isArray(value) || !value.every((s) => typeof s === "string"))
    throw new TypeError(`${where}: must be an array of strings`);
};
const options: Check = (value, where) => {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new TypeError(`${where}: must be an object keyed by provider, e.g. { openai: { ... } }`);
  for (const [provider, inner] of Object.entries(value))
    if (typeof inner !== "object" || inner === null || Array.isArray(inner))
      throw new TypeError(`${where}.${provider}: must be an object of that provider's options`);
};

/** The settings this adapter sends, each to the AI SDK call option of the same name. */
const KNOWN: Readonly<Record<string, Check>> = {
  maxOutputTokens: integer,
  temperature: number,
  topP: number,
  topK: integer,
  presencePenalty: number,
  frequencyPenalty: number,
  seed: integer,
  stopSequences: strings,
  providerOptions: options,
};

export const SETTING_NAMES = Object.keys(KNOWN);

/**
 * The AI SDK call options for `settings` (request settings over the
 * adapter's defaults, key by key). An unknown key or a bad value throws a
 * `TypeError` naming it: a setting is never dropped unsent.
 */
export function callSettings(
  defaults: ModelSettings | undefined,
  settings: ModelSettings | undefined,
): CallSettings {
  const merged: Record<string, Json> = {};
  for (const source of [defaults, settings])
    for (const [key, value] of Object.entries(source ?? {}))
      if (value !== undefined) merged[key] = value;
  for (const [key, value] of Object.entries(merged)) {
    const check = KNOWN[key];
    if (!check)
      throw new TypeError(
        `settings.${key}: not a setting @durably/model-ai-sdk sends (it knows ${SETTING_NAMES.join(", ")}); provider-specific options go in settings.providerOptions`,
      );
    check(value, `settings.${key}`);
  }
  return merged;
}

/** Provider options by provider key: `more`'s options for a provider are laid over `base`'s. */
export function mergeProviderOptions(
  base: SharedV3ProviderOptions | undefined,
  more: SharedV3ProviderOptions | undefined,
): SharedV3ProviderOptions | undefined {
  if (!base) return more;
  if (!more) return base;
  const out: SharedV3ProviderOptions = { ...base };
  for (const [provider, values] of Object.entries(more))
    out[provider] = { ...(base[provider] ?? {}), ...values };
  return out;
}
