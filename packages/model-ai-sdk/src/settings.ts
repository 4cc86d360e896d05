import type { LanguageModelV3CallOptions, SharedV3ProviderOptions } from "@ai-sdk/provider";
import type { ModelSettings } from "@durably/core";

export type CallSettings = Pick<
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

type Check = (value: unknown, where: string) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const finite = (value: unknown, where: string): number => {
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new TypeError(`${where}: must be a finite number`);
  return value;
};
const number: Check = finite;
const nonNegative: Check = (value, where) => {
  if (finite(value, where) < 0) throw new TypeError(`${where}: must be 0 or more`);
};
const fraction: Check = (value, where) => {
  const n = finite(value, where);
  if (n < 0 || n > 1) throw new TypeError(`${where}: must be between 0 and 1`);
};
const integer: Check = (value, where) => {
  if (!Number.isSafeInteger(value)) throw new TypeError(`${where}: must be an integer`);
};
const positiveInteger: Check = (value, where) => {
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new TypeError(`${where}: must be an integer of 1 or more`);
};
const strings: Check = (value, where) => {
  if (!Array.isArray(value) || !value.every((s) => typeof s === "string"))
    throw new TypeError(`${where}: must be an array of strings`);
};
const options: Check = (value, where) => {
  if (!isRecord(value))
    throw new TypeError(`${where}: must be an object keyed by provider, e.g. { openai: { ... } }`);
  for (const [provider, inner] of Object.entries(value))
    if (!isRecord(inner))
      throw new TypeError(`${where}.${provider}: must be an object of that provider's options`);
};

/** The settings this adapter sends, each to the AI SDK call option of the same name. */
const KNOWN: Readonly<Record<string, Check>> = {
  maxOutputTokens: positiveInteger,
  temperature: nonNegative,
  topP: fraction,
  topK: positiveInteger,
  presencePenalty: number,
  frequencyPenalty: number,
  seed: integer,
  stopSequences: strings,
  providerOptions: options,
};

export const SETTING_NAMES = Object.keys(KNOWN);

/** `value` as provider options (`{ provider: { ... } }`), or a `TypeError` naming `where`. */
export function checkProviderOptions(value: unknown, where: string): SharedV3ProviderOptions {
  options(value, where);
  return value as SharedV3ProviderOptions;
}

/**
 * `settings` as AI SDK call options, checked: an unknown key or a bad value
 * throws a `TypeError` naming it (`where.key`), so a setting is never
 * dropped unsent. Keys set to `undefined` are left out.
 */
export function checkSettings(settings: unknown, where: string): CallSettings {
  if (settings === undefined || settings === null) return {};
  if (!isRecord(settings)) throw new TypeError(`${where}: must be an object of settings`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    const check = KNOWN[key];
    if (!check)
      throw new TypeError(
        `${where}.${key}: not a setting @durably/model-ai-sdk sends (it knows ${SETTING_NAMES.join(", ")}); provider-specific options go in settings.providerOptions`,
      );
    check(value, `${where}.${key}`);
    out[key] = value;
  }
  return out;
}

/**
 * The AI SDK call options for a request's `settings` over the adapter's
 * checked `defaults`: key by key, except `providerOptions`, merged provider
 * by provider (the request's options for a provider laid over the
 * defaults'). A bad request setting throws a `TypeError` naming it.
 */
export function callSettings(
  defaults: CallSettings,
  settings: ModelSettings | undefined,
): CallSettings {
  const own = checkSettings(settings, "settings");
  const providerOptions = mergeProviderOptions(defaults.providerOptions, own.providerOptions);
  return { ...defaults, ...own, ...(providerOptions ? { providerOptions } : {}) };
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
