import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { aiSdkModel } from "@durably/model-ai-sdk";
import type { Model } from "@durably/core";
import { CliError } from "../cli.js";

/** `demo agent` on a real model: which server, which model. */
export interface LiveModelOptions {
  /** "openai": api.openai.com with OPENAI_API_KEY; "openai-compatible": `baseUrl` (Ollama, vLLM, ...). */
  provider: "openai" | "openai-compatible";
  baseUrl: string | undefined;
  model: string;
}

export const OPENAI_BASE_URL = "https://api.openai.com/v1";
/** The key sent to a `--base-url` server, when it needs one (Ollama does not). */
export const BASE_URL_KEY_VAR = "DURABLY_AGENT_API_KEY";

/**
 * The model behind `demo agent --base-url … --model …` or `--provider openai`:
 * the AI SDK's OpenAI-compatible provider (chat completions, which OpenAI,
 * Ollama, vLLM and llama.cpp all serve) through `aiSdkModel`. The key is read
 * from the environment here and given only to the provider (and to `redact`):
 * it is never stored or printed.
 */
export function liveModel(
  options: LiveModelOptions,
  env: NodeJS.ProcessEnv = process.env,
): { model: Model; where: string } {
  const openai = options.provider === "openai";
  const apiKey = openai ? env["OPENAI_API_KEY"] : env[BASE_URL_KEY_VAR];
  if (openai && (apiKey === undefined || apiKey === ""))
    throw new CliError("agent --provider openai needs OPENAI_API_KEY set in the environment");
  const baseURL = options.baseUrl ?? OPENAI_BASE_URL;
  try {
    new URL(baseURL);
  } catch {
    throw new CliError(
      `--base-url ${JSON.stringify(baseURL)} is not a URL (e.g. http://localhost:11434/v1)`,
    );
  }
  const provider = createOpenAICompatible({
    name: openai ? "openai" : "local",
    baseURL,
    ...(apiKey ? { apiKey } : {}),
    includeUsage: true,
  });
  return {
    model: aiSdkModel(provider.chatModel(options.model), { redact: apiKey ? [apiKey] : [] }),
    where: `${options.model} at ${baseURL}`,
  };
}
