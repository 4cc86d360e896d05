import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { scriptHeaders, type HarnessModelFactory } from "@durably/contract-tests";
import { aiSdkModel } from "../../src/index.js";

/** Where a crash child finds the test's OpenAI-compatible server. */
export const SERVER_URL_ENV = "DURABLY_TEST_OPENAI_URL";

/**
 * Models that answer a scenario's script through the whole real path:
 * aiSdkModel → @ai-sdk/openai-compatible → HTTP + SSE → the local scripted
 * server (which picks the turn and counts failures by the script's id).
 */
export function httpModels(url: () => string): HarnessModelFactory {
  return (script) =>
    aiSdkModel(
      createOpenAICompatible({
        name: "scripted",
        baseURL: url(),
        includeUsage: true,
        headers: scriptHeaders(script.id, script.turns, script.options ?? {}),
      }).chatModel("scripted"),
    );
}
